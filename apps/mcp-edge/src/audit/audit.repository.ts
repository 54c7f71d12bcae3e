import { finished } from 'node:stream/promises';
import type { AuditRecordsTable, Db, PgPool } from '@pkgreg/db';
import type { Insertable } from 'kysely';
import { from as copyFrom } from 'pg-copy-streams';

/** One /mcp request's record as the edge gives it; `at` is set by the edge, not by the database. */
export type AuditRow = Omit<Insertable<AuditRecordsTable>, 'at'> & { at: Date };

// The columns in the order of every row createAuditBatchEncoder writes, in COPY's binary format: Postgres
// then parses no text, timestamps least of all, and spends less of its CPU on each row (docs/benchmarks.md).
const COPY_SQL =
  'copy audit_records (at, request_id, namespace, client_id, method, tool, outcome, reason, http_status, latency_ms, backend) from stdin with (format binary)';
const COLUMNS = 11;

// The binary format (PostgreSQL docs, COPY, "Binary Format"): a signature, flags and a header extension
// length, then per row its number of fields and each field as a length (-1: null) and its bytes, then -1.
const HEADER = Buffer.concat([Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1'), Buffer.alloc(8)]);
const TRAILER = Buffer.from([0xff, 0xff]);
/** A timestamptz is sent as microseconds since 2000-01-01 UTC. */
const PG_EPOCH_MS = Date.UTC(2000, 0, 1);
const TWO_TO_32 = 2 ** 32;
/** Bytes a row takes besides its text: field count, lengths, timestamp, integer and real. */
const ROW_FIXED_BYTES = 2 + COLUMNS * 4 + 8 + 4 + 4;

/** Room for a row's texts: UTF-8 takes at most three bytes per UTF-16 unit. */
function textRoom(row: AuditRow): number {
  const { request_id, namespace, client_id, method, tool, outcome, reason, backend } = row;
  const units =
    request_id.length +
    (namespace?.length ?? 0) +
    (client_id?.length ?? 0) +
    (method?.length ?? 0) +
    (tool?.length ?? 0) +
    outcome.length +
    (reason?.length ?? 0) +
    (backend?.length ?? 0);
  return units * 3;
}

/**
 * One text field at `at`: its length, then its UTF-8 (null: length -1); returns where the next field
 * starts. U+0000, which no Postgres text value can hold (a client can put it in a JSON-RPC method name),
 * becomes U+FFFD, as lone surrogates do in UTF-8: one such row must not fail its whole batch and stall the
 * audit trail behind it.
 */
function writeText(bytes: Buffer, at: number, value: string | null | undefined): number {
  if (value === null || value === undefined) return bytes.writeInt32BE(-1, at);
  const text = value.includes('\0') ? value.replaceAll('\0', '\uFFFD') : value;
  const length = bytes.write(text, at + 4);
  bytes.writeInt32BE(length, at);
  return at + 4 + length;
}

/**
 * Encodes a batch of rows as one COPY's binary data, into `spare` when it has room (else into a new buffer
 * of at least `minBytes`). The table has no serial id: the microsecond digits of `at` number the rows of
 * one millisecond in the order they were recorded (each encoder remembers the last millisecond: one
 * encoder per writer), so ordering by `at` lists one edge's requests in order (up to 1000 a millisecond;
 * later ones tie). Under load one client calls one tool over and over: the fields from `namespace` to
 * `http_status` are copied from the row before when they are the same.
 */
export function createAuditBatchEncoder(
  minBytes: number,
): (rows: readonly AuditRow[], spare: Buffer | undefined) => { bytes: Buffer; used: number } {
  let lastMs = Number.NaN;
  let seq = 0;
  return (rows, spare) => {
    let size = HEADER.length + TRAILER.length;
    for (const row of rows) size += ROW_FIXED_BYTES + textRoom(row);
    const bytes = spare && spare.length >= size ? spare : Buffer.allocUnsafe(Math.max(size, minBytes));
    let at = HEADER.copy(bytes, 0);
    let last: AuditRow | undefined;
    // Where the last row's fields from `namespace` to `http_status` start and end in `bytes`.
    let middle = 0;
    let middleEnd = 0;
    for (const row of rows) {
      const ms = row.at.getTime();
      if (ms !== lastMs) {
        lastMs = ms;
        seq = 0;
      } else if (seq < 999) seq += 1;
      const micros = (ms - PG_EPOCH_MS) * 1000 + seq;
      const high = Math.floor(micros / TWO_TO_32);
      at = bytes.writeInt16BE(COLUMNS, at);
      at = bytes.writeInt32BE(8, at);
      at = bytes.writeInt32BE(high, at);
      at = bytes.writeUInt32BE(micros - high * TWO_TO_32, at);
      at = writeText(bytes, at, row.request_id);
      if (
        last !== undefined &&
        row.namespace === last.namespace &&
        row.client_id === last.client_id &&
        row.method === last.method &&
        row.tool === last.tool &&
        row.outcome === last.outcome &&
        row.reason === last.reason &&
        row.http_status === last.http_status
      ) {
        bytes.copyWithin(at, middle, middleEnd);
        at += middleEnd - middle;
      } else {
        const start = at;
        at = writeText(bytes, at, row.namespace);
        at = writeText(bytes, at, row.client_id);
        at = writeText(bytes, at, row.method);
        at = writeText(bytes, at, row.tool);
        at = writeText(bytes, at, row.outcome);
        at = writeText(bytes, at, row.reason);
        at = bytes.writeInt32BE(4, at);
        at = bytes.writeInt32BE(row.http_status, at);
        last = row;
        middle = start;
        middleEnd = at;
      }
      at = bytes.writeInt32BE(4, at);
      at = bytes.writeFloatBE(row.latency_ms, at);
      at = writeText(bytes, at, row.backend);
    }
    return { bytes, used: at + TRAILER.copy(bytes, at) };
  };
}

/**
 * Writes a batch of rows in COPY's binary format (createAuditBatchEncoder) with one COPY on a connection
 * of the pool: COPY is Postgres's cheapest way in for a batch of rows, and its cost is paid on every /mcp
 * request (docs/benchmarks.md, MCP edge).
 */
export async function copyAuditRows(pool: PgPool, data: Uint8Array): Promise<void> {
  const client = await pool.connect();
  let failure: Error | undefined;
  try {
    // One write and the end, awaited with finished() (pg-copy-streams emits finish after
    // ReadyForQuery: the rows are committed), not stream.pipeline: its AbortController builds a
    // DOMException (with its stack) every time it finishes, once per batch for nothing.
    const copy = client.query(copyFrom(COPY_SQL));
    copy.end(data);
    await finished(copy);
  } catch (error) {
    failure = error as Error;
    throw error;
  } finally {
    // A connection whose COPY failed half-way is not handed out again.
    client.release(failure);
  }
}

export function listAuditRows(db: Db, filter: { namespace?: string; limit: number }) {
  let query = db.selectFrom('audit_records').selectAll().orderBy('at', 'desc');
  if (filter.namespace) query = query.where('namespace', '=', filter.namespace);
  return query.limit(filter.limit).execute();
}
