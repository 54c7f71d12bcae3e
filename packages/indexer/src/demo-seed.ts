import { execFile } from 'node:child_process';
import { mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { DEMO_REPOSITORIES } from './demo-content.js';
import { type IndexerDeps, type IndexSummary, indexSource } from './indexer.service.js';

export { DEMO_REPOSITORIES } from './demo-content.js';

const run = promisify(execFile);

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
  for (const repo of DEMO_REPOSITORIES) {
    const root = resolve(dir, repo.path);
    await mkdir(root, { recursive: true });
    if (!(await exists(join(root, '.git')))) await git(root, ['init', '--quiet', '-b', 'main']);
    for (const [file, content] of Object.entries(repo.files)) {
      const target = join(root, file);
      const current = await readFile(target, 'utf8').catch(() => null);
      if (current === content) continue;
      await mkdir(dirname(target), { recursive: true });
      await writeFile(target, content, { mode: file.endsWith('.sh') ? 0o755 : 0o644 });
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
