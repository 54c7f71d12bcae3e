import { execFile } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { promisify } from 'node:util';
import type { Db } from '@pkgreg/db';
import { createTestDatabase, TEST_REDIS_URL, type TestDatabase, testKeyPrefix } from '@pkgreg/db/testing';
import { indexSource } from '@pkgreg/indexer';
import { commitFiles, createRepo, type FileSpec, removeDir, tempDir } from '@pkgreg/indexer/testing';
import { createLogger } from '@pkgreg/server-kit';
import { type RegistryProcess, startRegistry as startRegistryProcess } from '@pkgreg/testing';
import { Redis } from 'ioredis';
import { createEdge, type Edge } from '../src/app.js';
import { loadEnv } from '../src/env.js';
import { ensureActiveKey } from '../src/oauth/signing-keys.service.js';

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

/** A real edge over a real registry-api, both on one test file's own database. */
export interface EdgeOverRegistry {
  t: TestDatabase;
  /** The edge's public base URL: it listens before the registry starts, so the registry may know it. */
  base: string;
  registry: RunningRegistry;
  repos: SkillRepos;
  /** The edge's Redis (set by startEdge). */
  redis: Redis;
  /**
   * Starts the edge behind `base` with the tests' settings (quiet logs, audit flushed every 20 ms, its own
   * key prefixes from `name`) and `env`; called once the registry holds what the tests read.
   */
  startEdge(name: string, env?: Record<string, string>): Promise<Edge>;
  /** Stops whatever was started, in reverse. */
  stop(): Promise<void>;
}

/**
 * The database, the edge's listening socket and the registry (trusting the edge's delegation assertions
 * when `trustEdge`); the caller seeds the registry through `repos`, then calls startEdge.
 */
export async function startEdgeOverRegistry(options: { trustEdge: boolean }): Promise<EdgeOverRegistry> {
  const t = await createTestDatabase();
  let server: Server | undefined;
  let registry: RunningRegistry | undefined;
  let repos: SkillRepos | undefined;
  let redis: Redis | undefined;
  let edge: Edge | undefined;
  async function stop(): Promise<void> {
    const listening = server;
    if (listening) {
      await new Promise<void>((r) => {
        listening.close(() => r());
        listening.closeAllConnections();
      });
    }
    await edge?.shutdown();
    redis?.disconnect();
    await registry?.stop();
    repos?.remove();
    await t.destroy();
  }
  try {
    const socket = createServer();
    server = socket;
    await new Promise<void>((r) => socket.listen(0, '127.0.0.1', r));
    const base = `http://127.0.0.1:${(socket.address() as AddressInfo).port}`;
    const running = await startRegistry(t.url, options.trustEdge ? { EDGE_PUBLIC_BASE_URL: base } : {});
    registry = running;
    repos = new SkillRepos(t.db);
    return {
      t,
      base,
      registry: running,
      repos,
      get redis(): Redis {
        if (!redis) throw new Error('startEdge first');
        return redis;
      },
      async startEdge(name, env = {}) {
        redis = new Redis(TEST_REDIS_URL, { keyPrefix: `${testKeyPrefix(name)}:` });
        const settings = loadEnv({
          PKGREG_PUBLIC_BASE_URL: base,
          DATABASE_URL: t.url,
          REDIS_URL: TEST_REDIS_URL,
          EDGE_QUEUE_PREFIX: testKeyPrefix(`${name}-q`),
          EDGE_AUDIT_FLUSH_MS: '20',
          LOG_LEVEL: 'silent',
          REGISTRY_URL: running.url,
          ...env,
        });
        // As index.ts does: the access tokens' key and the delegation assertions' key.
        await ensureActiveKey(t.db);
        await ensureActiveKey(t.db, 'delegation');
        edge = createEdge({ db: t.db, redis, logger: createLogger('t', 'silent'), env: settings });
        socket.on('request', edge.handler);
        return edge;
      },
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}
