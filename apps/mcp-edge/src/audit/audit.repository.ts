import type { AuditRecordsTable, Db } from '@pkgreg/db';
import type { Insertable } from 'kysely';

export type AuditRow = Insertable<AuditRecordsTable>;

export async function insertAuditRows(db: Db, rows: AuditRow[]): Promise<void> {
  if (rows.length) await db.insertInto('audit_records').values(rows).execute();
}

export function listAuditRows(db: Db, filter: { namespace?: string; limit: number }) {
  let query = db.selectFrom('audit_records').selectAll().orderBy('at', 'desc').orderBy('id', 'desc');
  if (filter.namespace) query = query.where('namespace', '=', filter.namespace);
  return query.limit(filter.limit).execute();
}
