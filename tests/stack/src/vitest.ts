import { afterAll, beforeAll } from 'vitest';
import {
  type AppName,
  type AppProcess,
  createStackDatabase,
  DEFAULT_ADMIN_DATABASE_URL,
  DEFAULT_REDIS_URL,
  dropRedisPrefix,
  type Services,
  type StackDatabase,
  spawnApp,
  stackQueuePrefix,
} from './apps.js';

// The per-file stack: a database of its own (created and migrated before the file's tests), a queue
// prefix of its own, and every process the file starts, killed and cleaned up after its tests.

export interface FileStack {
  /** Where the file's apps find PostgreSQL and Redis. */
  readonly services: Services;
  /** Every process started through `spawn`, in start order (their lines are the file's logs). */
  readonly processes: readonly AppProcess[];
  spawn(app: AppName, env?: Record<string, string>): Promise<AppProcess>;
  /** Every log line of every process so far. */
  lines(): string[];
}

export interface StackOptions {
  /** Cluster to create the database on (default: the local test PostgreSQL). */
  adminDatabaseUrl?: () => string;
  redisUrl?: () => string;
}

/** Registers the hooks; read `services` from tests and hooks, not at module load. */
export function useStack(label: string, options: StackOptions = {}): FileStack {
  let database: StackDatabase | undefined;
  let services: Services | undefined;
  const processes: AppProcess[] = [];
  beforeAll(async () => {
    database = await createStackDatabase(options.adminDatabaseUrl?.() ?? DEFAULT_ADMIN_DATABASE_URL);
    services = {
      databaseUrl: database.url,
      redisUrl: options.redisUrl?.() ?? DEFAULT_REDIS_URL,
      queuePrefix: stackQueuePrefix(label),
    };
  });
  afterAll(async () => {
    await Promise.allSettled(processes.map((p) => p.kill()));
    if (services) await dropRedisPrefix(services.redisUrl, services.queuePrefix).catch(() => {});
    await database?.drop();
  });
  const get = (): Services => {
    if (!services) throw new Error('the stack is created in beforeAll: read it from a test or hook');
    return services;
  };
  return {
    get services() {
      return get();
    },
    processes,
    async spawn(app, env = {}) {
      const p = await spawnApp(app, get(), env);
      processes.push(p);
      return p;
    },
    lines: () => processes.flatMap((p) => p.lines),
  };
}
