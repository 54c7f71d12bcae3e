import { type Kysely, sql } from 'kysely';

// Frozen in time: never import app code here, never edit after it has shipped. Add a new file instead.

// Who reaches what changes on a handful of tables: tokens (revoked, limits), memberships and roles,
// organisations (suspended, GitHub link), scope settings and owners, code-host identities linked to an
// account, and accounts themselves (suspended, site role). Each such change notifies `pkgreg_access`
// on commit, so every registry process drops the tokens and reach it keeps in memory at once (the API's
// access-cache.ts): a revocation or a removed member takes effect on the next request in every process.
// Column lists keep frequent writes quiet: a token's last use, a provider's refreshed OAuth tokens.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create function pkgreg_note_access_change() returns trigger language plpgsql as $$
    begin
      perform pg_notify('pkgreg_access', tg_table_name);
      return null;
    end $$`.execute(db);
  const triggers: Array<[table: string, events: string]> = [
    [
      'access_tokens',
      'update of account_id, permission, organizations, scopes, packages, allowed_cidrs, expires_at, revoked_at, token_hash or delete',
    ],
    ['auth_member', 'insert or update or delete'],
    ['auth_organization', 'update of "suspendedAt", "githubOrgId" or delete'],
    ['scope_settings', 'insert or update of scope, organization_id, account_id or delete'],
    ['scope_owners', 'insert or update or delete'],
    ['auth_account', 'insert or update of "userId", "providerId", "accountId" or delete'],
    ['auth_user', 'update of "banned", "banExpires", "role" or delete'],
  ];
  for (const [table, events] of triggers) {
    await sql
      .raw(
        `create trigger ${table}_access_change after ${events} on ${table}
         for each statement execute function pkgreg_note_access_change()`,
      )
      .execute(db);
  }
  // truncate (tests, restores) is a change of everything too.
  for (const [table] of triggers) {
    await sql
      .raw(
        `create trigger ${table}_access_truncate after truncate on ${table}
         for each statement execute function pkgreg_note_access_change()`,
      )
      .execute(db);
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop function pkgreg_note_access_change() cascade`.execute(db);
}
