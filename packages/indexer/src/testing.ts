import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createDb, type Db } from '@pkgreg/db';

// Test harness shared by every package whose tests index real git repositories they build
// (`@pkgreg/indexer/testing`): repositories, commits with modes and links, SKILL.md text.

/** A SKILL.md with the given frontmatter lines and body. */
export function skillMd(frontmatter: string[], body = '# Skill\n\nDo the thing.\n'): string {
  return `---\n${frontmatter.join('\n')}\n---\n${body}`;
}

export function tempDir(label: string): string {
  return mkdtempSync(join(tmpdir(), `pkgreg-indexer-${label}-`));
}

export function removeDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}

const IDENTITY = [
  '-c',
  'user.name=test',
  '-c',
  'user.email=test@pkgreg.invalid',
  '-c',
  'commit.gpgsign=false',
];

export function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', [...IDENTITY, ...args], { cwd, encoding: 'utf8' });
}

/** A file with more than text: bytes, an executable bit, or a symbolic link to `target`. */
export type FileSpec = string | Buffer | { content: string | Buffer; executable: true } | { symlink: string };

/** A real git repository at `root/<owner>/<name>` with `files` committed on `branch`. */
export function createRepo(
  root: string,
  owner: string,
  name: string,
  files: Record<string, FileSpec>,
  branch = 'main',
): string {
  const dir = join(root, owner, name);
  mkdirSync(dir, { recursive: true });
  git(dir, 'init', '--quiet', '-b', branch);
  commitFiles(dir, files, 'initial');
  return dir;
}

/** When a commit was made: git's dates (ISO 8601 with an offset); the author's defaults to the committer's. */
export interface CommitDates {
  committer: string;
  author?: string;
}

/** Writes or deletes (null) files, then commits everything (at `dates`, else now). */
export function commitFiles(
  dir: string,
  files: Record<string, FileSpec | null>,
  message = 'change',
  dates?: CommitDates,
): void {
  for (const [path, spec] of Object.entries(files)) {
    const target = join(dir, path);
    rmSync(target, { force: true });
    if (spec === null) continue;
    mkdirSync(dirname(target), { recursive: true });
    if (typeof spec === 'string' || Buffer.isBuffer(spec)) {
      writeFileSync(target, spec);
    } else if ('symlink' in spec) {
      symlinkSync(spec.symlink, target);
    } else {
      writeFileSync(target, spec.content);
      chmodSync(target, 0o755);
    }
  }
  git(dir, 'add', '--all');
  const env = dates
    ? {
        ...process.env,
        GIT_COMMITTER_DATE: dates.committer,
        GIT_AUTHOR_DATE: dates.author ?? dates.committer,
      }
    : process.env;
  execFileSync('git', [...IDENTITY, 'commit', '--quiet', '--allow-empty', '-m', message], { cwd: dir, env });
}

/** What `git hash-object` says for a committed file. */
export function blobShaOf(dir: string, path: string): string {
  return git(dir, 'rev-parse', `HEAD:${path}`).trim();
}

/** A Kysely on the test database (createDb's pool tolerates the forced drop at teardown). */
export function testKysely(url: string): Db {
  return createDb(url, { max: 5, applicationName: 'pkgreg-indexer-test' });
}
