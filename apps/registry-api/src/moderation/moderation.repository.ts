import type { Db } from '@pkgreg/db';
import { lockDependencyGraph, type ReadAccess, readableBy, refreshDependencyState } from '@pkgreg/registry';
import { sql } from 'kysely';
// SQL of moderation (docs/risk-scan.md): reports of packages, and the operator's quarantine.

/**
 * The id of a package that detail shows (not delisted) to a reader with `access`: reports are taken for
 * those only (a private package the reporter may not read is as missing to it as to detail).
 */
export async function findReportablePackageId(
  db: Db,
  scope: string,
  name: string,
  access: ReadAccess,
): Promise<string | undefined> {
  const row = await db
    .selectFrom('packages')
    .select('id')
    .where('scope', '=', scope)
    .where('name', '=', name)
    .where('status', '<>', 'delisted')
    .where(readableBy(access))
    .executeTakeFirst();
  return row?.id;
}

export async function insertReport(
  db: Db,
  report: { packageId: string; reason: string; details: string | null; clientAddress: string },
): Promise<{ id: string; created_at: Date }> {
  return db
    .insertInto('package_reports')
    .values({
      package_id: report.packageId,
      reason: report.reason,
      details: report.details,
      client_address: report.clientAddress,
    })
    .returning(['id', 'created_at'])
    .executeTakeFirstOrThrow();
}

export interface ReportListing {
  id: string;
  scope: string;
  name: string;
  reason: string;
  details: string | null;
  client_address: string;
  created_at: Date;
  quarantined_at: Date | null;
  risk: string | null;
}

/** Reports, newest first; of one package when `key` is given. */
export async function listReports(
  db: Db,
  options: { key?: { scope: string; name: string }; limit: number },
): Promise<ReportListing[]> {
  let query = db
    .selectFrom('package_reports as r')
    .innerJoin('packages as p', 'p.id', 'r.package_id')
    .select([
      'r.id',
      'p.scope',
      'p.name',
      'r.reason',
      'r.details',
      'r.client_address',
      'r.created_at',
      'p.quarantined_at',
      'p.risk',
    ])
    .orderBy('r.created_at', 'desc')
    .limit(options.limit);
  if (options.key)
    query = query.where('p.scope', '=', options.key.scope).where('p.name', '=', options.key.name);
  return query.execute();
}

/**
 * Quarantines a package: out of list and search (the list-change trigger rebuilds both), detail says
 * `quarantined` with the reason. Returns false when there is no such package. A second quarantine
 * replaces the reason and keeps the first time.
 */
export async function quarantinePackage(
  db: Db,
  key: { scope: string; name: string },
  reason: string,
): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    // A quarantined package is no longer counted as a dependant (dependants are listed as the list is).
    await lockDependencyGraph(trx);
    const row = await trx
      .updateTable('packages')
      .set({ quarantined_at: sql`coalesce(quarantined_at, now())`, quarantine_reason: reason })
      .where('scope', '=', key.scope)
      .where('name', '=', key.name)
      .returning('id')
      .executeTakeFirst();
    if (row) await refreshDependencyState(trx, { packageIds: [row.id] });
    return row !== undefined;
  });
}

/** Lifts a quarantine; false when the package is not quarantined. */
export async function releasePackage(db: Db, key: { scope: string; name: string }): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    await lockDependencyGraph(trx);
    const row = await trx
      .updateTable('packages')
      .set({ quarantined_at: null, quarantine_reason: null })
      .where('scope', '=', key.scope)
      .where('name', '=', key.name)
      .where('quarantined_at', 'is not', null)
      .returning('id')
      .executeTakeFirst();
    if (row) await refreshDependencyState(trx, { packageIds: [row.id] });
    return row !== undefined;
  });
}
