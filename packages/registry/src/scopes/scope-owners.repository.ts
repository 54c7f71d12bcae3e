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
