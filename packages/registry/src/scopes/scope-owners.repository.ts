import type { Database } from '@pkgreg/db';
import { type Kysely, type Selectable, sql } from 'kysely';

// SQL of scope ownership (docs/publishing.md): each scope is bound to one code-host account by its id.
// Plain functions taking the database (or a transaction) first.

type Conn = Kysely<Database>;
export type ScopeOwnerRow = Selectable<Database['scope_owners']>;

/** The scope bound to a code-host account, when one is. */
export async function findScopeOfOwner(db: Conn, ownerId: number): Promise<ScopeOwnerRow | undefined> {
  return db.selectFrom('scope_owners').selectAll().where('owner_id', '=', ownerId).executeTakeFirst();
}

export async function findScopeOwner(db: Conn, scope: string): Promise<ScopeOwnerRow | undefined> {
  return db.selectFrom('scope_owners').selectAll().where('scope', '=', scope).executeTakeFirst();
}

/**
 * Whether a pkgreg account or organisation holds the scope (scope_settings: claimed by an upload, or
 * moved into an organisation) without being linked to the code-host account `ownerId` (a GitHub
 * identity of that account, or the organisation's linked GitHub organisation).
 */
export async function heldByAnotherAccount(db: Conn, scope: string, ownerId: number): Promise<boolean> {
  const result = await sql<{ held: boolean }>`
    select true as held
      from scope_settings s
     where s.scope = ${scope}
       and (s.account_id is not null or s.organization_id is not null)
       and not exists (
         select 1 from auth_account a
          where a."userId" = s.account_id and a."providerId" = 'github' and a."accountId" = ${String(ownerId)})
       and not exists (
         select 1 from auth_organization o where o."id" = s.organization_id and o."githubOrgId" = ${ownerId})
  `.execute(db);
  return result.rows.length > 0;
}

/** A renamed account's new login, recorded on the scope it keeps. */
export async function renameScopeOwner(db: Conn, scope: string, login: string): Promise<void> {
  await db
    .updateTable('scope_owners')
    .set({ owner_login: login, updated_at: sql<Date>`now()` })
    .where('scope', '=', scope)
    .execute();
}

/** Binds the scope unless another run bound it first; returns it when this insert bound it. */
export async function insertScopeOwner(
  db: Conn,
  values: { scope: string; ownerId: number; login: string; boundBy: 'publish' | 'index' },
): Promise<string | undefined> {
  const inserted = await db
    .insertInto('scope_owners')
    .values({
      scope: values.scope,
      owner_id: values.ownerId,
      owner_login: values.login,
      bound_by: values.boundBy,
    })
    .onConflict((oc) => oc.doNothing())
    .returning('scope')
    .executeTakeFirst();
  return inserted?.scope;
}
