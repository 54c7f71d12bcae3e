import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdir, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { FileDatabase } from '@pkgreg/db/vitest';
import { indexSource } from '@pkgreg/indexer';
import { tempDir } from './cli.js';

// Packages reach the registry the way production gets them: SKILL.md files committed to a git
// repository, indexed by @pkgreg/indexer (decisions.md: Registry / Indexing, "a local git repository is
// a source too").

const run = promisify(execFile);

export interface SkillFixture {
  owner: string;
  repo: string;
  /** Folder of the skill inside the repository ('' for the root). */
  path: string;
  name: string;
  description: string;
  body?: string;
  allowedTools?: string[];
  /** Other files of the skill's folder, by relative path: text, or bytes with an executable bit or a link. */
  extraFiles?: Record<string, string | ExtraFile>;
  /** Files of an earlier commit to delete. */
  removedFiles?: string[];
  /** A `version:` line in the frontmatter. */
  version?: string;
  /** `metadata.dependencies` in the frontmatter: `@scope/name[@range], …`. */
  dependencies?: string;
}

export interface ExtraFile {
  content?: string | Buffer;
  executable?: boolean;
  /** A symbolic link to this target instead of a file. */
  linkTarget?: string;
}

export function skillMarkdown(skill: SkillFixture): string {
  const tools = skill.allowedTools?.length
    ? `allowed-tools:\n${skill.allowedTools.map((t) => `  - ${t}\n`).join('')}`
    : '';
  const version = skill.version ? `version: ${skill.version}\n` : '';
  const dependencies =
    skill.dependencies === undefined
      ? ''
      : `metadata:\n  dependencies: ${JSON.stringify(skill.dependencies)}\n`;
  return `---\nname: ${skill.name}\ndescription: ${skill.description}\nlicense: MIT\n${version}${tools}${dependencies}---\n\n# ${skill.name}\n\n${skill.body ?? 'Use this skill well.'}\n`;
}

let root: string | undefined;

async function git(cwd: string, args: string[]): Promise<void> {
  await run('git', ['-c', 'user.name=pkgreg test', '-c', 'user.email=test@pkgreg.invalid', ...args], { cwd });
}

async function repoDir(skill: SkillFixture): Promise<string> {
  root ??= await tempDir('repos');
  const dir = join(root, skill.owner, skill.repo);
  if (!existsSync(join(dir, '.git'))) {
    await mkdir(dir, { recursive: true });
    await git(dir, ['init', '-q', '-b', 'main']);
  }
  return dir;
}

/** The skill's folder in its source repository (created with the repository). */
export async function sourceFolder(skill: SkillFixture): Promise<string> {
  return join(await repoDir(skill), ...skill.path.split('/').filter(Boolean));
}

/** Commits the skills' SKILL.md files and indexes each repository touched. */
export async function seedSkills(database: FileDatabase, skills: SkillFixture[]): Promise<void> {
  const repos = new Map<string, { dir: string; owner: string }>();
  for (const skill of skills) {
    const dir = await repoDir(skill);
    const folder = join(dir, ...skill.path.split('/').filter(Boolean));
    await mkdir(folder, { recursive: true });
    await writeFile(join(folder, 'SKILL.md'), skillMarkdown(skill));
    for (const [file, spec] of Object.entries(skill.extraFiles ?? {})) {
      const extra: ExtraFile = typeof spec === 'string' ? { content: spec } : spec;
      const path = join(folder, file);
      await mkdir(join(path, '..'), { recursive: true });
      await rm(path, { force: true });
      if (extra.linkTarget !== undefined) {
        await symlink(extra.linkTarget, path);
        continue;
      }
      await writeFile(path, extra.content ?? '');
      await chmod(path, extra.executable ? 0o755 : 0o644);
    }
    for (const file of skill.removedFiles ?? []) await rm(join(folder, file), { force: true });
    repos.set(dir, { dir, owner: skill.owner });
  }
  for (const { dir, owner } of repos.values()) {
    await git(dir, ['add', '-A']);
    await git(dir, ['commit', '-q', '--allow-empty', '-m', 'skills']);
    const summary = await indexSource({ db: database.db }, { kind: 'git', locator: dir, owner });
    if (summary.status !== 'succeeded' || summary.rejections.length > 0) {
      throw new Error(`indexing ${dir} failed: ${JSON.stringify(summary)}`);
    }
  }
}

/** A new commit of the skill's SKILL.md, re-indexed: the registry now serves the new content. */
export const updateSkill = (database: FileDatabase, skill: SkillFixture) => seedSkills(database, [skill]);
