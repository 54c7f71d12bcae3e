import { createHash, randomBytes } from 'node:crypto';
import pg from 'pg';
import { createDb, type Db, quoteIdent } from './create-db.js';
import { migrateToLatest } from './migrate.js';
import { migrations } from './migrations/index.js';

// Test isolation (STYLE.md §13): every test file gets a database of its own, cloned from a migrated
// template so the cost is one CREATE DATABASE, not a full migration run. Real PostgreSQL, no mocks.

const ADMIN_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const TEMPLATE_PREFIX = 'pkgreg_tpl_';
const TEST_PREFIX = 'pkgreg_t_';

/** `_` is a LIKE wildcard: escape it so prefixes match only themselves. */
function likePrefix(prefix: string): string {
  return prefix.replaceAll('_', '\\_');
}

function withDatabase(url: string, name: string): string {
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
}

async function admin<T>(fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: ADMIN_URL });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

function templateName(): string {
  // Keyed by the migrations' names and code, so an edited migration never reuses a stale template.
  const source = Object.entries(migrations).map(([name, m]) => `${name}\n${String(m.up)}`);
  const hash = createHash('sha256').update(source.join('\n')).digest('hex').slice(0, 16);
  return `${TEMPLATE_PREFIX}${hash}`;
}

async function ensureTemplate(): Promise<string> {
  const name = templateName();
  return admin(async (client) => {
    // One process builds the template; the others wait on the lock, then find it ready.
    await client.query('select pg_advisory_lock(hashtext($1))', [name]);
    try {
      const found = await client.query('select 1 from pg_database where datname = $1', [name]);
      if (!found.rowCount) {
        const building = `${name}_build`;
        await client.query(`drop database if exists ${quoteIdent(building)} with (force)`);
        await client.query(`create database ${quoteIdent(building)}`);
        const db = createDb(withDatabase(ADMIN_URL, building), { max: 1 });
        try {
          await migrateToLatest(db);
        } finally {
          await db.destroy();
        }
        await client.query(`alter database ${quoteIdent(building)} rename to ${quoteIdent(name)}`);
        await client.query(`alter database ${quoteIdent(name)} with is_template true`);
        // Older templates (from other migration sets) and test databases left by killed runs.
        const stale = await client.query(
          `select datname from pg_database where datname like $1 and datname <> $2`,
          [`${likePrefix(TEMPLATE_PREFIX)}%`, name],
        );
        // Best effort: a concurrent run on an older checkout may be cloning one of them right now.
        for (const row of stale.rows as { datname: string }[]) {
          try {
            await client.query(`alter database ${quoteIdent(row.datname)} with is_template false`);
            await client.query(`drop database if exists ${quoteIdent(row.datname)} with (force)`);
          } catch {}
        }
      }
    } finally {
      await client.query('select pg_advisory_unlock(hashtext($1))', [name]);
    }
    return name;
  });
}

async function dropLeftovers(client: pg.Client): Promise<void> {
  // Test database names carry their creation time; anything over an hour old was left by a killed run.
  const cutoff = Math.floor(Date.now() / 1000) - 3600;
  const rows = await client.query(`select datname from pg_database where datname like $1`, [
    `${likePrefix(TEST_PREFIX)}%`,
  ]);
  for (const { datname } of rows.rows as { datname: string }[]) {
    const created = Number.parseInt(datname.slice(TEST_PREFIX.length).split('_')[0] ?? '', 36);
    if (Number.isFinite(created) && created < cutoff) {
      await client.query(`drop database if exists ${quoteIdent(datname)} with (force)`).catch(() => {});
    }
  }
}

export interface TestDatabase {
  /** Connection URL of this test file's own database. */
  url: string;
  db: Db;
  /** Closes the pool and drops the database. */
  destroy(): Promise<void>;
}

/** A fresh, migrated database for one test file. Call `destroy()` in afterAll. */
export async function createTestDatabase(): Promise<TestDatabase> {
  const template = await ensureTemplate();
  const stamp = Math.floor(Date.now() / 1000).toString(36);
  const name = `${TEST_PREFIX}${stamp}_${randomBytes(5).toString('hex')}`;
  await admin(async (client) => {
    await dropLeftovers(client);
    await client.query(`create database ${quoteIdent(name)} template ${quoteIdent(template)}`);
  });
  const url = withDatabase(ADMIN_URL, name);
  const db = createDb(url, { max: 5, applicationName: 'pkgreg-test' });
  return {
    url,
    db,
    async destroy() {
      await db.destroy();
      await admin((client) => client.query(`drop database if exists ${quoteIdent(name)} with (force)`));
    },
  };
}

/** Redis URL for tests. */
export const TEST_REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

/** A key prefix of this test file's own; use it for ioredis `keyPrefix` and BullMQ `prefix`. */
export function testKeyPrefix(label: string): string {
  return `pkgreg-test:${label}:${randomBytes(4).toString('hex')}`;
}
