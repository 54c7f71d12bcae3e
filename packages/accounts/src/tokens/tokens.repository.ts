import type { Database } from '@pkgreg/db';
import { type Kysely, type Selectable, sql } from 'kysely';

type Conn = Kysely<Database>;
export type AccessTokenRow = Selectable<Database['access_tokens']>;

export interface NewTokenRow {
  accountId: string;
  name: string;
  hash: Buffer;
  prefix: string;
  permission: 'read' | 'publish';
  organizations: string[];
  scopes: string[];
  packages: string[];
  allowedCidrs: string[];
  expiresAt: Date;
}

export async function insertToken(db: Conn, row: NewTokenRow): Promise<AccessTokenRow> {
  return db
    .insertInto('access_tokens')
    .values({
      account_id: row.accountId,
      name: row.name,
      token_hash: row.hash,
      prefix: row.prefix,
      permission: row.permission,
      organizations: row.organizations,
      scopes: row.scopes,
      packages: row.packages,
      allowed_cidrs: row.allowedCidrs,
      expires_at: row.expiresAt,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** The token with this hash and whether its account is suspended, whatever its state. */
export async function findTokenByHash(
  db: Conn,
  hash: Buffer,
): Promise<(AccessTokenRow & { banned: boolean; site_role: string | null }) | undefined> {
  return db
    .selectFrom('access_tokens')
    .innerJoin('auth_user', 'auth_user.id', 'access_tokens.account_id')
    .selectAll('access_tokens')
    .select([sql<boolean>`coalesce(auth_user."banned", false)`.as('banned'), 'auth_user.role as site_role'])
    .where('access_tokens.token_hash', '=', hash)
    .executeTakeFirst();
}

export async function listTokens(db: Conn, accountId: string): Promise<AccessTokenRow[]> {
  return db
    .selectFrom('access_tokens')
    .selectAll()
    .where('account_id', '=', accountId)
    .orderBy('created_at', 'desc')
    .execute();
}

/** Revokes one of the account's tokens; undefined when it has no such token (or it was revoked). */
export async function revokeToken(
  db: Conn,
  accountId: string,
  id: string,
): Promise<AccessTokenRow | undefined> {
  return db
    .updateTable('access_tokens')
    .set({ revoked_at: sql<Date>`now()` })
    .where('id', '=', id)
    .where('account_id', '=', accountId)
    .where('revoked_at', 'is', null)
    .returningAll()
    .executeTakeFirst();
}

/** Last use is kept to the minute: one write per token per minute however busy it is. */
export async function touchToken(db: Conn, id: string): Promise<void> {
  await db
    .updateTable('access_tokens')
    .set({ last_used_at: sql<Date>`now()` })
    .where('id', '=', id)
    .where((eb) =>
      eb.or([
        eb('last_used_at', 'is', null),
        eb('last_used_at', '<', sql<Date>`now() - interval '1 minute'`),
      ]),
    )
    .execute();
}

/** One of the account's tokens by id, whatever its state. */
export async function findAccountToken(
  db: Conn,
  accountId: string,
  id: string,
): Promise<AccessTokenRow | undefined> {
  return db
    .selectFrom('access_tokens')
    .selectAll()
    .where('id', '=', id)
    .where('account_id', '=', accountId)
    .executeTakeFirst();
}
