import { execFile } from 'node:child_process';
import { copyFile, mkdir, readdir, readFile, stat } from 'node:fs/promises';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { type IndexerDeps, type IndexSummary, indexSource } from './indexer.service.js';

const run = promisify(execFile);

/** The demo repositories' files, as fixture files beside src/ and dist/ (demo/README.md). */
const DEMO_DIR = fileURLToPath(new URL('../demo/', import.meta.url));

/** `<owner>/<repository>` of each demo repository, relative to the demo folder. */
export async function demoRepositories(): Promise<string[]> {
  const repos: string[] = [];
  for (const owner of await readdir(DEMO_DIR, { withFileTypes: true })) {
    if (!owner.isDirectory()) continue;
    for (const repo of await readdir(join(DEMO_DIR, owner.name), { withFileTypes: true })) {
      if (repo.isDirectory()) repos.push(`${owner.name}/${repo.name}`);
    }
  }
  return repos.sort();
}

async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries.filter((e) => e.isFile()).map((e) => relative(dir, join(e.parentPath, e.name)));
}

// A fixed identity: the seed must not depend on (or need) the operator's git configuration.
async function git(cwd: string, args: string[]): Promise<string> {
  const identity = ['-c', 'user.name=pkgreg demo', '-c', 'user.email=demo@pkgreg.invalid'];
  const { stdout } = await run('git', [...identity, '-c', 'commit.gpgsign=false', ...args], { cwd });
  return stdout;
}

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}

/** Writes the demo repositories under `dir` and commits what changed; returns their paths. */
export async function writeDemoRepositories(dir: string): Promise<string[]> {
  const paths: string[] = [];
  for (const repo of await demoRepositories()) {
    const root = resolve(dir, repo);
    await mkdir(root, { recursive: true });
    if (!(await exists(join(root, '.git')))) await git(root, ['init', '--quiet', '-b', 'main']);
    for (const file of await filesUnder(join(DEMO_DIR, repo))) {
      const source = join(DEMO_DIR, repo, file);
      const target = join(root, file);
      const [wanted, current] = await Promise.all([readFile(source), readFile(target).catch(() => null)]);
      if (current?.equals(wanted)) continue;
      await mkdir(dirname(target), { recursive: true });
      // copyFile keeps the fixture's executable bit, which git records.
      await copyFile(source, target);
    }
    await git(root, ['add', '--all']);
    const staged = await run('git', ['diff', '--cached', '--quiet'], { cwd: root }).then(
      () => false,
      () => true,
    );
    const hasHead = await run('git', ['rev-parse', '--verify', '--quiet', 'HEAD'], { cwd: root }).then(
      () => true,
      () => false,
    );
    if (staged || !hasHead) await git(root, ['commit', '--quiet', '-m', 'pkgreg demo skills']);
    paths.push(root);
  }
  return paths;
}

export interface DemoSeedResult {
  repositories: string[];
  summaries: IndexSummary[];
}

/** Creates (idempotently) the demo repositories under `dir` and indexes them with the real indexer. */
export async function seedDemo(deps: IndexerDeps, dir: string): Promise<DemoSeedResult> {
  const repositories = await writeDemoRepositories(dir);
  const summaries: IndexSummary[] = [];
  for (const locator of repositories) summaries.push(await indexSource(deps, { kind: 'git', locator }));
  return { repositories, summaries };
}
