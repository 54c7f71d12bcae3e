import { sql } from 'kysely';
import type { DbOrTx } from '../db.js';

export interface IdempotencyKeyRef {
  namespace: string;
  toolName: string;
  key: string;
}

function whereKey(ref: IdempotencyKeyRef) {
  return sql`subject_namespace = ${ref.namespace} and tool_name = ${ref.toolName} and idempotency_key = ${ref.key}`;
}

/**
 * A claim is identified by its row's created_at as text: full microseconds, where a JS Date would
 * round to milliseconds and never compare equal again.
 */
export type ClaimId = string;

/** Claims the key with a placeholder (result null); returns the claim, or undefined when taken. */
export async function claimKey(
  db: DbOrTx,
  ref: IdempotencyKeyRef,
  hash: string,
  ttlSeconds: number,
): Promise<ClaimId | undefined> {
  // clock_timestamp: a placeholder's age must be measurable even inside a long caller transaction.
  // Read ONCE, so expires_at is exactly created_at + ttl (two calls differed by a microsecond).
  const result = await sql<{ claim: string }>`
    insert into idempotency_records
      (subject_namespace, tool_name, idempotency_key, request_hash, result, created_at, expires_at)
    select ${ref.namespace}, ${ref.toolName}, ${ref.key}, ${hash}, null::jsonb, t.now,
      t.now + make_interval(secs => ${ttlSeconds})
    from (select clock_timestamp() as now) t
    on conflict (subject_namespace, tool_name, idempotency_key) do nothing
    returning created_at::text as claim`.execute(db);
  return result.rows[0]?.claim;
}

export interface IdempotencyRecordView {
  requestHash: string;
  /** The stored result, or null while the first call is still running. */
  result: unknown;
  claim: ClaimId;
  expired: boolean;
  /** Milliseconds since the claim. */
  ageMs: number;
}

export async function findRecord(
  db: DbOrTx,
  ref: IdempotencyKeyRef,
): Promise<IdempotencyRecordView | undefined> {
  const { rows } = await sql<{
    request_hash: string;
    result: unknown;
    result_text: string | null;
    result_type: string | null;
    claim: string;
    expired: boolean;
    age_ms: number;
  }>`
    select request_hash, result #>> '{}' as result_text, jsonb_typeof(result) as result_type, result,
           created_at::text as claim, expires_at <= clock_timestamp() as expired,
           (extract(epoch from clock_timestamp() - created_at) * 1000)::float8 as age_ms
    from idempotency_records where ${whereKey(ref)}`.execute(db);
  const row = rows[0];
  if (!row) return undefined;
  return {
    requestHash: row.request_hash,
    result:
      row.result_type === 'string' && row.result_text !== null ? JSON.parse(row.result_text) : row.result,
    claim: row.claim,
    expired: row.expired,
    ageMs: row.age_ms,
  };
}

/**
 * Stores the result of `claim` as a jsonb string of its JSON text: a jsonb object would reorder keys,
 * and a replay must be the first reply as sent. False when that claim is gone (purged, taken over). */
export async function completeClaim(
  db: DbOrTx,
  ref: IdempotencyKeyRef,
  claim: ClaimId,
  result: unknown,
): Promise<boolean> {
  const r = await sql`
    update idempotency_records set result = to_jsonb(${JSON.stringify(result)}::text)
    where ${whereKey(ref)} and created_at = ${claim}::timestamptz and result is null`.execute(db);
  return Number(r.numAffectedRows ?? 0) > 0;
}

/** Removes one claim: a failed run's placeholder, or an expired/abandoned record being replaced. */
export async function releaseClaim(db: DbOrTx, ref: IdempotencyKeyRef, claim: ClaimId): Promise<void> {
  await sql`delete from idempotency_records where ${whereKey(ref)} and created_at = ${claim}::timestamptz`.execute(
    db,
  );
}

export async function deleteIdempotencyRecordsOf(db: DbOrTx, namespace: string): Promise<number> {
  const r = await db
    .deleteFrom('idempotency_records')
    .where('subject_namespace', '=', namespace)
    .executeTakeFirst();
  return Number(r.numDeletedRows);
}

/** Housekeeping for a periodic job: records past expires_at are ignored anyway. */
export async function deleteExpiredIdempotencyRecords(db: DbOrTx): Promise<number> {
  const r = await db
    .deleteFrom('idempotency_records')
    .where('expires_at', '<=', sql<Date>`now()`)
    .executeTakeFirst();
  return Number(r.numDeletedRows);
}
