import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { Db } from '@pkgreg/db';
import { TEST_REDIS_URL } from '@pkgreg/db/testing';
import { indexSource } from '@pkgreg/indexer';
import { commitFiles, createRepo, type FileSpec, removeDir, tempDir } from '@pkgreg/indexer/testing';
import { type RegistryProcess, startRegistry as startRegistryProcess } from '@pkgreg/testing';

// The real registry-api for the skill:// tests: its built server (apps/registry-api/dist) on the test file's
// own database, fed the way production is, by indexing git repositories the test commits skills to.

const API_DIST = new URL('../../registry-api/dist/', import.meta.url).pathname;
const run = promisify(execFile);

export interface RunningRegistry extends RegistryProcess {
  /** `node apps/registry-api/dist/cli.js <args>` on the same database (quarantine, remove, …). */
  cli(...args: string[]): Promise<string>;
}

export async function startRegistry(
  databaseUrl: string,
  env: Record<string, string> = {},
): Promise<RunningRegistry> {
  const registry = await startRegistryProcess({
    entry: `${API_DIST}index.js`,
    databaseUrl,
    redisUrl: TEST_REDIS_URL,
    // A change must show at the next request, and lists and search must follow indexing quickly.
    env: { DETAIL_CACHE_TTL_MS: '0', DERIVED_REFRESH_INTERVAL_MS: '100', ...env },
  });
  return {
    ...registry,
    async cli(...args) {
      return (await run(process.execPath, [`${API_DIST}cli.js`, ...args], { env: registry.env })).stdout;
    },
  };
}

/** Git repositories of skills, indexed into the registry's database as `pnpm registry index` would. */
export class SkillRepos {
  readonly root = tempDir('edge-skills');
  private readonly dirs = new Map<string, string>();

  constructor(private readonly db: Db) {}

  /** Commits `files` to `owner/repo` (created on first use; null deletes a file) and indexes it. */
  async commit(owner: string, repo: string, files: Record<string, FileSpec | null>): Promise<void> {
    const key = `${owner}/${repo}`;
    let dir = this.dirs.get(key);
    if (!dir) {
      dir = createRepo(this.root, owner, repo, {});
      this.dirs.set(key, dir);
    }
    commitFiles(dir, files);
    const summary = await indexSource({ db: this.db }, { kind: 'git', locator: dir, owner });
    if (summary.status !== 'succeeded') throw new Error(`indexing ${key} failed: ${JSON.stringify(summary)}`);
  }

  remove(): void {
    removeDir(this.root);
  }
}
