import type { AuditRecordsTable, Db } from '@pkgreg/db';
import { type Insertable, sql } from 'kysely';

export type AuditRow = Insertable<AuditRecordsTable>;

/**
 * One statement per batch with one array parameter per column (`unnest`), rather than a VALUES list of
 * rows × 11 placeholders: the statement stays the same size however many rows it carries, so neither
 * side spends time building or parsing thousands of placeholders on the request-heavy path.
 */
export async function insertAuditRows(db: Db, rows: AuditRow[]): Promise<void> {
  if (!rows.length) return;
  const col = <K extends keyof AuditRow>(key: K) => rows.map((r) => r[key] ?? null);
  await sql`
    insert into audit_records
      (at, request_id, namespace, client_id, method, tool, outcome, reason, http_status, latency_ms, backend)
    select * from unnest(
      ${col('at')}::timestamptz[], ${col('request_id')}::text[], ${col('namespace')}::text[],
      ${col('client_id')}::text[], ${col('method')}::text[], ${col('tool')}::text[], ${col('outcome')}::text[],
      ${col('reason')}::text[], ${col('http_status')}::int[], ${col('latency_ms')}::real[], ${col('backend')}::text[]
    )`.execute(db);
}

export function listAuditRows(db: Db, filter: { namespace?: string; limit: number }) {
  let query = db.selectFrom('audit_records').selectAll().orderBy('at', 'desc').orderBy('id', 'desc');
  if (filter.namespace) query = query.where('namespace', '=', filter.namespace);
  return query.limit(filter.limit).execute();
}
