import type { PublishProof, PublishResult } from '@pkgreg/contracts';
import type { Database, Db } from '@pkgreg/db';
import { type Kysely, type Selectable, sql } from 'kysely';
import { IndexingError } from './errors.js';

// SQL of publishing shared by the registry API (publish, owner actions) and the worker (runs): scope
// ownership by code-host account id, and publish runs. Plain functions taking the database first.

type Conn = Kysely<Database>;
export type ScopeOwnerRow = Selectable<Database['scope_owners']>;
export type PublishRunRow = Selectable<Database['publish_runs']>;

/** The scope bound to a code-host account, when one is. */
export async function findScopeOfOwner(db: Conn, ownerId: number): Promise<ScopeOwnerRow | undefined> {
  return db.selectFrom('scope_owners').selectAll().where('owner_id', '=', ownerId).executeTakeFirst();
}

export async function findScopeOwner(db: Conn, scope: string): Promise<ScopeOwnerRow | undefined> {
  return db.selectFrom('scope_owners').selectAll().where('scope', '=', scope).executeTakeFirst();
}

/** Who is asking for a scope: the code host's account (id and current login). */
export interface ScopeClaim {
  /** The scope the login names (sanitizeScope of it). */
  scope: string;
  ownerId: number;
  login: string;
}

/** The scope a claim resolves to, or why it is refused; nothing is written. */
export type ScopeDecision =
  | { ok: true; scope: string; bound: ScopeOwnerRow | null }
  | { ok: false; message: string };

/**
 * A renamed account (same id) keeps the scope it was bound to, whatever its login says now; a login
 * whose scope is bound to another id is refused (a new account that took a freed login gets nothing).
 */
export async function decideScope(db: Conn, claim: ScopeClaim): Promise<ScopeDecision> {
  const mine = await findScopeOfOwner(db, claim.ownerId);
  if (mine) return { ok: true, scope: mine.scope, bound: mine };
  const holder = await findScopeOwner(db, claim.scope);
  if (holder) return { ok: false, message: scopeTakenMessage(holder, claim) };
  return { ok: true, scope: claim.scope, bound: null };
}

export function scopeTakenMessage(holder: ScopeOwnerRow, claim: ScopeClaim): string {
  return (
    `scope @${holder.scope} belongs to the code-host account with id ${holder.owner_id} ` +
    `(last seen as "${holder.owner_login}"); "${claim.login}" is now account ${claim.ownerId}, ` +
    'another account, so it cannot publish into that scope'
  );
}

/**
 * Binds the claim's scope to its account unless bound already (first publish or index wins), and
 * records a renamed account's new login. Throws IndexingError('forbidden') when the scope belongs to
 * another account. Run it in the transaction that writes under the scope, so a failure binds nothing.
 */
export async function bindScope(db: Conn, claim: ScopeClaim, boundBy: 'publish' | 'index'): Promise<string> {
  const decision = await decideScope(db, claim);
  if (!decision.ok) throw new IndexingError('forbidden', decision.message);
  if (decision.bound) {
    if (decision.bound.owner_login !== claim.login) {
      await db
        .updateTable('scope_owners')
        .set({ owner_login: claim.login, updated_at: sql<Date>`now()` })
        .where('scope', '=', decision.bound.scope)
        .execute();
    }
    return decision.scope;
  }
  const inserted = await db
    .insertInto('scope_owners')
    .values({ scope: decision.scope, owner_id: claim.ownerId, owner_login: claim.login, bound_by: boundBy })
    .onConflict((oc) => oc.doNothing())
    .returning('scope')
    .executeTakeFirst();
  if (inserted) return inserted.scope;
  // Another run bound it between our read and our insert: decide again against what it wrote.
  const again = await decideScope(db, claim);
  if (!again.ok) throw new IndexingError('forbidden', again.message);
  return again.scope;
}

export interface NewPublishRun {
  repository: string;
  locator: string;
  scope: string;
  ref: string | null;
  proof: PublishProof;
}

export async function createPublishRun(db: Conn, run: NewPublishRun): Promise<PublishRunRow> {
  return db
    .insertInto('publish_runs')
    .values({
      repository: run.repository,
      locator: run.locator,
      scope: run.scope,
      ref: run.ref,
      proof: run.proof,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function findPublishRun(db: Conn, id: string): Promise<PublishRunRow | undefined> {
  return db.selectFrom('publish_runs').selectAll().where('id', '=', id).executeTakeFirst();
}

/**
 * queued (or running, on a redelivery) -> running. False when the run already ended: a late or
 * duplicate delivery then does nothing.
 */
export async function startPublishRun(db: Conn, id: string): Promise<boolean> {
  const row = await db
    .updateTable('publish_runs')
    .set({ status: 'running', started_at: sql<Date>`coalesce(started_at, clock_timestamp())` })
    .where('id', '=', id)
    .where('status', 'in', ['queued', 'running'])
    .returning('id')
    .executeTakeFirst();
  return row !== undefined;
}

export async function finishPublishRun(
  db: Conn,
  id: string,
  outcome:
    | { status: 'succeeded'; result: PublishResult; indexingRunId: string | null }
    | { status: 'failed'; error: string; indexingRunId: string | null },
): Promise<void> {
  await db
    .updateTable('publish_runs')
    .set({
      status: outcome.status,
      result: outcome.status === 'succeeded' ? JSON.stringify(outcome.result) : null,
      error: outcome.status === 'failed' ? outcome.error : null,
      indexing_run_id: outcome.indexingRunId,
      started_at: sql<Date>`coalesce(started_at, clock_timestamp())`,
      finished_at: sql<Date>`clock_timestamp()`,
    })
    .where('id', '=', id)
    .where('status', 'in', ['queued', 'running'])
    .execute();
}

export type { Db };
