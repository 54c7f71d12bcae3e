import { sql } from 'kysely';
import type { DbOrTx } from '../db.js';

// Mutations of a namespace's memory take this lock shared; quarantine, release and purge take it
// exclusive. So a write that passed the quarantine check commits before a purge starts, never after it.
function namespaceLockKey(namespace: string) {
  return sql`hashtextextended(${`pkgreg:memory:${namespace}`}, 0)`;
}

/** Only meaningful inside a transaction: released at commit or rollback. */
export async function lockNamespaceShared(trx: DbOrTx, namespace: string): Promise<void> {
  await sql`select pg_advisory_xact_lock_shared(${namespaceLockKey(namespace)})`.execute(trx);
}

export async function lockNamespaceExclusive(trx: DbOrTx, namespace: string): Promise<void> {
  await sql`select pg_advisory_xact_lock(${namespaceLockKey(namespace)})`.execute(trx);
}

export function findQuarantineRow(db: DbOrTx, namespace: string) {
  return db
    .selectFrom('quarantined_sources')
    .selectAll()
    .where('namespace', '=', namespace)
    .executeTakeFirst();
}

export function upsertQuarantineRow(
  db: DbOrTx,
  namespace: string,
  state: 'quarantined' | 'purged',
  reason: string | null,
) {
  return db
    .insertInto('quarantined_sources')
    .values({ namespace, state, reason })
    .onConflict((oc) => oc.column('namespace').doUpdateSet({ state, reason, updated_at: sql<Date>`now()` }))
    .returningAll()
    .executeTakeFirstOrThrow();
}

export function deleteQuarantineRow(db: DbOrTx, namespace: string) {
  return db
    .deleteFrom('quarantined_sources')
    .where('namespace', '=', namespace)
    .returningAll()
    .executeTakeFirst();
}

export function listQuarantineRows(db: DbOrTx) {
  return db
    .selectFrom('quarantined_sources')
    .selectAll()
    .orderBy('updated_at', 'desc')
    .orderBy('namespace')
    .execute();
}
