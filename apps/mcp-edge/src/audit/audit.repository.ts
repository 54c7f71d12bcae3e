import { finished } from 'node:stream/promises';
import type { AuditRecordsTable, Db, PgPool } from '@pkgreg/db';
import type { Insertable } from 'kysely';
import { from as copyFrom } from 'pg-copy-streams';

export type AuditRow = Insertable<AuditRecordsTable>;

const COLUMNS = [
  'at',
  'request_id',
  'namespace',
  'client_id',
  'method',
  'tool',
  'outcome',
  'reason',
  'http_status',
  'latency_ms',
  'backend',
] as const satisfies ReadonlyArray<keyof AuditRow>;

const COPY_SQL = `copy audit_records (${COLUMNS.join(', ')}) from stdin`;

const COPY_ESCAPES: Record<string, string> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' };

/**
 * One value in COPY's text format: `\N` for null, backslash, tab, newline and carriage return escaped.
 * U+0000, which no Postgres text value can hold (a client can put it in a JSON-RPC method name), becomes
 * U+FFFD: one such row must not fail its whole batch and stall the audit trail behind it.
 */
function copyValue(value: AuditRow[keyof AuditRow]): string {
  if (value === null || value === undefined) return '\\N';
  if (typeof value === 'number') return String(value);
  if (value instanceof Date) return value.toISOString();
  const text = String(value);
  return /[\\\t\n\r\0]/.test(text)
    ? text.replace(/[\\\t\n\r]/g, (c) => COPY_ESCAPES[c] as string).replaceAll('\0', '\uFFFD')
    : text;
}

function copyText(rows: AuditRow[]): string {
  let text = '';
  for (const row of rows) text += `${COLUMNS.map((c) => copyValue(row[c])).join('\t')}\n`;
  return text;
}

/**
 * Writes a batch with COPY on a connection of the pool: measured against the INSERT ... SELECT from
 * json_to_recordset it replaced, Postgres spends 3.4-6.2 µs per row instead of 7.0-10.5 (500-row batches
 * with the table's three indexes), and it is paid on every /mcp request (docs/benchmarks.md, MCP edge).
 */
export async function insertAuditRows(pool: PgPool, rows: AuditRow[]): Promise<void> {
  if (!rows.length) return;
  const client = await pool.connect();
  let failure: Error | undefined;
  try {
    // One write and the end, awaited with finished() (pg-copy-streams emits finish after
    // ReadyForQuery: the rows are committed), not stream.pipeline: its AbortController builds a
    // DOMException (with its stack) every time it finishes, ~1% of the edge's CPU under load.
    const copy = client.query(copyFrom(COPY_SQL));
    copy.end(copyText(rows));
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
  let query = db.selectFrom('audit_records').selectAll().orderBy('at', 'desc').orderBy('id', 'desc');
  if (filter.namespace) query = query.where('namespace', '=', filter.namespace);
  return query.limit(filter.limit).execute();
}
