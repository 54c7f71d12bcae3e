import type { Database } from '@pkgreg/db';
import type { Kysely, Transaction } from 'kysely';

/** What every function here takes first: the pool-backed Kysely or a transaction of it. */
export type DbOrTx = Kysely<Database> | Transaction<Database>;

/** Runs `fn` in the caller's transaction when there is one, else in a new one (Kysely cannot nest). */
export function inTransaction<T>(db: DbOrTx, fn: (trx: Kysely<Database>) => Promise<T>): Promise<T> {
  return db.isTransaction ? fn(db) : db.transaction().execute(fn);
}

/** Postgres unique_violation, optionally of one named constraint or index. */
export function isUniqueViolation(error: unknown, constraint?: string): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const e = error as { code?: unknown; constraint?: unknown };
  return e.code === '23505' && (constraint === undefined || e.constraint === constraint);
}
