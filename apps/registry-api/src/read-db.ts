import { type CreateDbOptions, createDb, type Db } from '@pkgreg/db';
import type { Env } from './env.js';

/**
 * The pool that list, search, the feed, detail, skill-md, dependants and versions read from when
 * DATABASE_READ_URL names one (a replica); undefined without it, and they read DATABASE_URL. Its
 * sessions are read-only whatever the URL points at, so a write routed here by mistake fails at once
 * instead of working against a primary and failing only on a real replica. Writes, publishing, track,
 * moderation and what must read its own writes (publish runs, owner actions) stay on DATABASE_URL.
 * `open` is index.ts's (outages watched, closed on shutdown).
 */
export function openReadDb(
  env: Pick<Env, 'DATABASE_READ_URL' | 'REGISTRY_DB_POOL_SIZE'>,
  open: (url: string, options: CreateDbOptions) => Db = createDb,
): Db | undefined {
  if (!env.DATABASE_READ_URL) return undefined;
  return open(env.DATABASE_READ_URL, {
    max: env.REGISTRY_DB_POOL_SIZE,
    applicationName: 'pkgreg-registry-api-read',
    // JIT off for the reason DATABASE_URL's pool has it off (index.ts).
    settings: { jit: 'off', default_transaction_read_only: 'on' },
  });
}
