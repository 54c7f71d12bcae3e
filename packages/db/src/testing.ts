import { createHash, randomBytes } from 'node:crypto';
import pg from 'pg';
import { createDb, type Db, quoteIdent } from './create-db.js';
import { migrateToLatest } from './migrate.js';
import { migrations } from './migrations/index.js';

// Test isolation: every test file gets a database of its own, so files run in parallel without seeing
// each other's rows. It is cloned from a migrated template so the cost is one CREATE DATABASE, not a
// full migration run. Real PostgreSQL, no mocks.

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

function migrationsHash(): string {
  // Keyed by the migrations' names and code, so an edited migration never reuses a stale template.
  const source = Object.entries(migrations).map(([name, m]) => `${name}\n${String(m.up)}`);
  return createHash('sha256').update(source.join('\n')).digest('hex').slice(0, 16);
}

const nowSeconds = () => Math.floor(Date.now() / 1000);
/** Names carry their creation time (base 36) after the prefix, so leftovers can be aged. */
const createdAt = (name: string, prefix: string) =>
  Number.parseInt(name.slice(prefix.length).split('_')[0] ?? '', 36);

async function ensureTemplate(): Promise<string> {
  const hash = migrationsHash();
  const prefix = `${TEMPLATE_PREFIX}${hash}_`;
  return admin(async (client) => {
    // One process builds the template; the others wait on the lock, then find it ready.
    await client.query('select pg_advisory_lock(hashtext($1))', [prefix]);
    try {
      const found = await client.query<{ datname: string }>(
        'select datname from pg_database where datname like $1 and datistemplate order by datname desc limit 1',
        // Names are `<prefix><time>_<hash>`: match on the hash suffix, not on `<prefix><hash>_`.
        [`${likePrefix(TEMPLATE_PREFIX)}%${likePrefix(`_${hash}`)}`],
      );
      if (found.rows[0]) return found.rows[0].datname;
      const name = `${TEMPLATE_PREFIX}${nowSeconds().toString(36)}_${hash}`;
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
      await dropOldTemplates(client, name);
      return name;
    } finally {
      await client.query('select pg_advisory_unlock(hashtext($1))', [prefix]);
    }
  });
}

async function dropOldTemplates(client: pg.Client, keep: string): Promise<void> {
  // Templates of other migration sets, once over an hour old: a run on another checkout (an older
  // branch, a CI clone) may still be cloning a younger one. Best effort for the same reason.
  const cutoff = nowSeconds() - 3600;
  const rows = await client.query<{ datname: string }>(
    'select datname from pg_database where datname like $1 and datname <> $2',
    [`${likePrefix(TEMPLATE_PREFIX)}%`, keep],
  );
  for (const { datname } of rows.rows) {
    const created = createdAt(datname, TEMPLATE_PREFIX);
    if (Number.isFinite(created) && created >= cutoff) continue;
    try {
      await client.query(`alter database ${quoteIdent(datname)} with is_template false`);
      await client.query(`drop database if exists ${quoteIdent(datname)} with (force)`);
    } catch {}
  }
}

async function dropLeftovers(client: pg.Client): Promise<void> {
  // Test database names carry their creation time; anything over an hour old was left by a killed run.
  const cutoff = nowSeconds() - 3600;
  const rows = await client.query(`select datname from pg_database where datname like $1`, [
    `${likePrefix(TEST_PREFIX)}%`,
  ]);
  for (const { datname } of rows.rows as { datname: string }[]) {
    const created = createdAt(datname, TEST_PREFIX);
    if (Number.isFinite(created) && created < cutoff) {
      await client.query(`drop database if exists ${quoteIdent(datname)} with (force)`).catch(() => {});
    }
  }
}

export interface TestDatabase {
  /** Connection URL of this test file's own database. */
  url: string;
  db: Db;
  /** Closes the pool and drops the database (the drop waits for a checkpoint: seconds under load). */
  destroy(): Promise<void>;
}

/** A fresh, migrated database for one test file. Call `destroy()` in afterAll. */
export async function createTestDatabase(): Promise<TestDatabase> {
  const name = `${TEST_PREFIX}${nowSeconds().toString(36)}_${randomBytes(5).toString('hex')}`;
  await admin(async (client) => {
    await dropLeftovers(client);
    for (let attempt = 1; ; attempt++) {
      const template = await ensureTemplate();
      try {
        await client.query(`create database ${quoteIdent(name)} template ${quoteIdent(template)}`);
        return;
      } catch (error) {
        // 3D000: the template went away between lookup and clone (another checkout's cleanup); rebuild once.
        if ((error as { code?: string }).code !== '3D000' || attempt > 1) throw error;
      }
    }
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

// People, organisations and what they own, as the accounts code writes them (better-auth's tables,
// scope_settings, edge_delegations): for tests that need a member, an outsider and a private scope without
// signing anyone in.

/** An account to insert: its id (name and `<id>@example.com` follow), and a ban when it has one. */
export type AccountRow = string | { id: string; banned?: boolean; banExpires?: Date };

/** Accounts (auth_user), verified, created now. */
export async function insertAccounts(db: Db, accounts: readonly AccountRow[]): Promise<void> {
  if (accounts.length === 0) return;
  const now = new Date();
  await db
    .insertInto('auth_user')
    .values(
      accounts.map((account) => {
        const { id, banned, banExpires } = typeof account === 'string' ? { id: account } : account;
        return {
          id,
          name: id,
          email: `${id}@example.com`,
          emailVerified: true,
          image: null,
          createdAt: now,
          updatedAt: now,
          role: null,
          banned: banned ?? null,
          banReason: banned ? 'abuse' : null,
          banExpires: banExpires ?? null,
        };
      }),
    )
    .execute();
}

export interface OrganisationRows {
  id: string;
  slug: string;
  name?: string;
  /** Member accounts (inserted already) and their roles; each member row's id is `m-<account>`. */
  members?: Record<string, 'owner' | 'admin' | 'publisher' | 'reader'>;
  /** Scopes the organisation owns, and whether each is private. */
  scopes?: Record<string, 'private' | 'public'>;
}

/** An organisation (auth_organization), its members (auth_member) and its scopes (scope_settings). */
export async function insertOrganisation(db: Db, org: OrganisationRows): Promise<void> {
  const now = new Date();
  await db
    .insertInto('auth_organization')
    .values({
      id: org.id,
      name: org.name ?? org.slug,
      slug: org.slug,
      createdAt: now,
      logo: null,
      metadata: null,
      githubOrgId: null,
      githubOrgLogin: null,
      suspendedAt: null,
    })
    .execute();
  const members = Object.entries(org.members ?? {});
  if (members.length > 0) {
    await db
      .insertInto('auth_member')
      .values(
        members.map(([userId, role]) => ({
          id: `m-${userId}`,
          organizationId: org.id,
          userId,
          role,
          createdAt: now,
        })),
      )
      .execute();
  }
  const scopes = Object.entries(org.scopes ?? {});
  if (scopes.length > 0) {
    await db
      .insertInto('scope_settings')
      .values(
        scopes.map(([scope, visibility]) => ({
          scope,
          organization_id: org.id,
          account_id: null,
          visibility,
          created_at: now,
          updated_at: now,
        })),
      )
      .execute();
  }
}

/** `accountId` allowed the app `clientId` the `scopes` (edge_delegations), as the consent page records it. */
export async function insertDelegation(
  db: Db,
  delegation: { accountId: string; clientId: string; scopes: readonly string[]; revoked?: boolean },
): Promise<void> {
  await db
    .insertInto('edge_delegations')
    .values({
      account_id: delegation.accountId,
      client_id: delegation.clientId,
      client_name: 'Agent',
      scopes: [...delegation.scopes],
      grant_id: null,
      revoked_at: delegation.revoked ? new Date() : null,
      tokens_not_before: null,
      last_used_at: null,
    })
    .execute();
}
