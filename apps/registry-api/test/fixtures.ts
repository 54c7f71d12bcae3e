import type { RequestListener } from 'node:http';
import type { Db, PackagesTable } from '@pkgreg/db';
import { TEST_REDIS_URL, testKeyPrefix } from '@pkgreg/db/testing';
import { type FileDatabase, useTestDatabase } from '@pkgreg/db/vitest';
import { createLogger, type Logger, traceRequests } from '@pkgreg/server-kit';
import type { RuntimeQueue } from '@pkgreg/tasks';
import { Redis } from 'ioredis';
import type { Insertable } from 'kysely';
import { afterAll, beforeAll } from 'vitest';
import { createRegistry } from '../src/app.js';
import { loadEnv } from '../src/env.js';
import { refreshDerivedTables } from '../src/packages/derived-tables-refresher.js';
import type { PackageCache } from '../src/packages/package-cache.js';

export type PackageInsert = Insertable<PackagesTable>;

let sequence = 0;

/**
 * A realistic packages row, as the indexer writes it (the indexer is another engineer's work, so the
 * API tests insert rows directly). Override any column; scope/name default to unique values.
 */
export function packageRow(overrides: Partial<PackageInsert> = {}): PackageInsert {
  sequence += 1;
  const scope = overrides.scope ?? 'acme';
  const name = overrides.name ?? `skill-${sequence}`;
  const description = overrides.description ?? `Helps with task number ${sequence}.`;
  const skillMd = `---\nname: ${name}\ndescription: ${description}\nallowed-tools: Read Write\n---\n\n# ${name}\n\nSteps.\n`;
  return {
    scope,
    name,
    description,
    kind: 'skill',
    category: 'development',
    tags: ['docs', 'pdf'],
    compatibility: ['claude-code'],
    language: 'en',
    version: '1.2.0',
    source_repo: `${scope}/skills`,
    source_path: `skills/${name}`,
    source_ref: 'main',
    repo_url: `https://github.com/${scope}/skills`,
    homepage_url: null,
    repo_owner: scope,
    author: 'Ada Lovelace',
    repo_stars: 10,
    license: 'MIT',
    skill_md_raw: skillMd,
    frontmatter: JSON.stringify({ name, description, 'allowed-tools': 'Read Write' }),
    allowed_tools: ['Read', 'Write'],
    token_count: 120,
    file_count: 3,
    progressive_disclosure: true,
    dep_count: 0,
    dependant_count: 0,
    verified: false,
    featured: false,
    status: 'active',
    hosted: false,
    first_indexed_at: '2026-11-01T10:00:00.000Z',
    last_indexed_at: '2026-11-20T10:00:00.000Z',
    last_commit_sha: 'a94a8fe5ccb19ba61c4c0873d391e987982fbbd3',
    ...overrides,
  };
}

/** Inserts rows and refreshes the list positions, as the API's refresher would within a second. */
export async function insertPackages(db: Db, rows: PackageInsert[]): Promise<void> {
  for (let i = 0; i < rows.length; i += 500) {
    await db
      .insertInto('packages')
      .values(rows.slice(i, i + 500))
      .execute();
  }
  await refreshDerivedTables(db);
}

export const silentLogger = createLogger('test', 'silent');

/** This test file's own database and Redis key prefix, and the registry's request listener over them. */
export interface FileRegistry extends FileDatabase {
  readonly redis: Redis;
  readonly app: RequestListener;
  /** The app's detail micro-cache, to wait for its background revalidation (`settled()`). */
  readonly cache: PackageCache;
}

/** What a test may give the app instead of the defaults (a silent logger, a queue opened at first publish). */
export interface TestRegistryOptions {
  logger?: Logger;
  /** Read in beforeAll, after the file's earlier hooks (which may start the queue). */
  queue?: () => RuntimeQueue;
}

/**
 * Registers the hooks that create this file's database (useTestDatabase), a Redis client under a key
 * prefix of its own and the registry app built on them with `env`, and close them after the file's
 * tests. Read the fields from tests and hooks (not at module load); call it before the file's own hooks.
 * `env` may be a function, read in beforeAll: settings that earlier hooks learn (a local server's URL).
 */
export function useTestRegistry(
  env: Record<string, string> | (() => Record<string, string>) = {},
  options: TestRegistryOptions = {},
): FileRegistry {
  const database = useTestDatabase();
  let current: { redis: Redis; app: RequestListener; cache: PackageCache } | undefined;
  beforeAll(() => {
    const redis = new Redis(TEST_REDIS_URL, {
      lazyConnect: true,
      keyPrefix: `${testKeyPrefix('registry')}:`,
    });
    const settings = loadEnv(typeof env === 'function' ? env() : env);
    const logger = options.logger ?? silentLogger;
    const queue = options.queue?.();
    // createApp's own composition, keeping the cache in reach of the tests.
    const registry = createRegistry({
      db: database.db,
      redis,
      logger,
      env: settings,
      ...(queue ? { queue } : {}),
    });
    current = { redis, app: traceRequests(registry.handler), cache: registry.cache };
  });
  afterAll(() => {
    current?.redis.disconnect();
  });
  const get = () => {
    if (!current) throw new Error('the test registry is created in beforeAll: read it from a test or hook');
    return current;
  };
  return {
    get db() {
      return database.db;
    },
    get url() {
      return database.url;
    },
    get redis() {
      return get().redis;
    },
    get app() {
      return get().app;
    },
    get cache() {
      return get().cache;
    },
  };
}
