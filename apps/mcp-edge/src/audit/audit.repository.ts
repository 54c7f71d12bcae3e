import { finished } from 'node:stream/promises';
import type { AuditRecordsTable, Db, PgPool } from '@pkgreg/db';
import type { Insertable } from 'kysely';
import { from as copyFrom } from 'pg-copy-streams';

/** One /mcp request's record as the edge gives it; `at` is set by the edge, not by the database. */
export type AuditRow = Omit<Insertable<AuditRecordsTable>, 'at'> & { at: Date };

// The columns in the order of every line createAuditLineEncoder writes.
const COPY_SQL =
  'copy audit_records (at, request_id, namespace, client_id, method, tool, outcome, reason, http_status, latency_ms, backend) from stdin';

const COPY_ESCAPES: Record<string, string> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' };
const NEEDS_ESCAPE = /[\\\t\n\r\0]/;

/**
 * One text value in COPY's text format: `\N` for null, backslash, tab, newline and carriage return escaped.
 * U+0000, which no Postgres text value can hold (a client can put it in a JSON-RPC method name), becomes
 * U+FFFD: one such row must not fail its whole batch and stall the audit trail behind it.
 */
function copyText(value: string | null | undefined): string {
  if (value === null || value === undefined) return '\\N';
  return NEEDS_ESCAPE.test(value)
    ? value.replace(/[\\\t\n\r]/g, (c) => COPY_ESCAPES[c] as string).replaceAll('\0', '\uFFFD')
    : value;
}

/**
 * Encodes rows as lines of COPY text. Rows of one busy millisecond share their timestamp's ISO text, so
 * each encoder remembers the last one (one encoder per writer). The table has no serial id: the
 * microsecond digits of `at` number the rows of one millisecond in the order they were recorded, so
 * ordering by `at` lists one edge's requests in order (up to 1000 a millisecond; later ones tie).
 * Under load one client calls one tool over and over: the columns from `namespace` to `http_status` and
 * `backend` are encoded again only when a row's differ from the last row's.
 */
export function createAuditLineEncoder(): (row: AuditRow) => string {
  let lastMs = Number.NaN;
  let lastIso = ''; // the ISO text without its `Z`
  let seq = 0;
  let last: AuditRow | undefined;
  let middle = ''; // `namespace` to `http_status`, with the tabs between them
  let end = ''; // `backend` and the newline
  return (row) => {
    const ms = row.at.getTime();
    if (ms !== lastMs) {
      lastMs = ms;
      lastIso = row.at.toISOString().slice(0, -1);
      seq = 0;
    } else if (seq < 999) seq += 1;
    if (
      last === undefined ||
      row.namespace !== last.namespace ||
      row.client_id !== last.client_id ||
      row.method !== last.method ||
      row.tool !== last.tool ||
      row.outcome !== last.outcome ||
      row.reason !== last.reason ||
      row.http_status !== last.http_status ||
      row.backend !== last.backend
    ) {
      middle = `${copyText(row.namespace)}\t${copyText(row.client_id)}\t${copyText(row.method)}\t${copyText(row.tool)}\t${copyText(row.outcome)}\t${copyText(row.reason)}\t${row.http_status}`;
      end = `\t${copyText(row.backend)}\n`;
      last = row;
    }
    const micros = seq < 10 ? `00${seq}` : seq < 100 ? `0${seq}` : `${seq}`;
    // Latency to the microsecond: the column is a real (about 7 significant digits) anyway.
    const latency = Math.round(row.latency_ms * 1000) / 1000;
    return `${lastIso}${micros}Z\t${copyText(row.request_id)}\t${middle}\t${latency}${end}`;
  };
}

/**
 * Writes lines of COPY text (createAuditLineEncoder) with one COPY on a connection of the pool: COPY is
 * Postgres's cheapest way in for a batch of rows, and its cost is paid on every /mcp request
 * (docs/benchmarks.md, MCP edge).
 */
export async function copyAuditLines(pool: PgPool, lines: Uint8Array): Promise<void> {
  if (!lines.length) return;
  const client = await pool.connect();
  let failure: Error | undefined;
  try {
    // One write and the end, awaited with finished() (pg-copy-streams emits finish after
    // ReadyForQuery: the rows are committed), not stream.pipeline: its AbortController builds a
    // DOMException (with its stack) every time it finishes, once per batch for nothing.
    const copy = client.query(copyFrom(COPY_SQL));
    copy.end(lines);
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
