import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import type { Db } from '@pkgreg/db';
import { TEST_REDIS_URL } from '@pkgreg/db/testing';
import { indexSource } from '@pkgreg/indexer';
import { commitFiles, createRepo, type FileSpec, removeDir, tempDir } from '@pkgreg/indexer/testing';

// The real registry-api for the skill:// tests: its built server (apps/registry-api/dist) on the test file's
// own database, fed the way production is, by indexing git repositories the test commits skills to.

const API_DIST = new URL('../../registry-api/dist/', import.meta.url).pathname;
const run = promisify(execFile);

export interface RunningRegistry {
  url: string;
  stop(): Promise<void>;
  /** `node apps/registry-api/dist/cli.js <args>` on the same database (quarantine, remove, …). */
  cli(...args: string[]): Promise<string>;
}

async function freePort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  server.close();
  await once(server, 'close');
  return typeof address === 'object' && address ? address.port : 0;
}

export async function startRegistry(databaseUrl: string): Promise<RunningRegistry> {
  const port = await freePort();
  const env = {
    PATH: process.env.PATH ?? '',
    NODE_ENV: 'test',
    LOG_LEVEL: 'warn',
    DATABASE_URL: databaseUrl,
    REDIS_URL: TEST_REDIS_URL,
    REGISTRY_HOST: '127.0.0.1',
    REGISTRY_PORT: String(port),
    // A change must show at the next request, and lists and search must follow indexing quickly.
    DETAIL_CACHE_TTL_MS: '0',
    DERIVED_REFRESH_INTERVAL_MS: '100',
    // Several test files start a registry at once: none may contend for the default operator port.
    METRICS_PORT: '0',
  };
  const child: ChildProcess = spawn(process.execPath, [`${API_DIST}index.js`], {
    env,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (chunk) => {
    stderr += String(chunk);
  });
  const url = `http://127.0.0.1:${port}`;
  for (const deadline = Date.now() + 30_000; ; await sleep(100)) {
    if (child.exitCode !== null) throw new Error(`registry-api exited (${child.exitCode}): ${stderr}`);
    const ready = await fetch(`${url}/readyz`).then(
      (r) => r.ok,
      () => false,
    );
    if (ready) break;
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`registry-api did not become ready: ${stderr}`);
    }
  }
  return {
    url,
    async stop() {
      if (child.exitCode !== null) return;
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      await exited;
    },
    async cli(...args) {
      return (await run(process.execPath, [`${API_DIST}cli.js`, ...args], { env })).stdout;
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

/** Waits until `check` holds (lists and search trail indexing by one refresh of the registry). */
export async function eventually(check: () => Promise<boolean>, what: string): Promise<void> {
  for (const deadline = Date.now() + 15_000; !(await check()); await sleep(100)) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
  }
}
