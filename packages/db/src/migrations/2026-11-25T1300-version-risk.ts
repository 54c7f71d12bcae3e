import { type Kysely, sql } from 'kysely';

// Frozen in time: never import app code here, never edit after it has shipped. Add a new file instead.

// The risk scan (docs/risk-scan.md), reports and quarantine.
//
// package_versions gains the scan of the version: `risk` (its highest finding's severity, or 'none';
// null for versions created before the scan, until `pnpm registry rescan`), `findings` (jsonb, the
// findings in file and line order, read whole with the version) and `scanned_at`. packages gains
// `risk`, its latest version's, so list and search read it from the row they already read.
//
// Quarantine is the operator's, apart from `status` (which the indexer rewrites from the SKILL.md on
// every run): `quarantined_at` and its reason. A quarantined package leaves list and search, so the list
// positions are rebuilt without it and its change is counted like a status change.
//
// package_reports: anyone's report of a package (reason, details, the client address it came from).
export async function up(db: Kysely<any>): Promise<void> {
  const riskCheck = (column: string) => sql`${sql.ref(column)} in ('none', 'low', 'medium', 'high')`;
  await db.schema
    .alterTable('package_versions')
    .addColumn('risk', 'text', (c) => c.check(riskCheck('risk')))
    .addColumn('findings', 'jsonb', (c) => c.notNull().defaultTo(sql`'[]'::jsonb`))
    .addColumn('scanned_at', 'timestamptz')
    .execute();
  await db.schema
    .alterTable('packages')
    .addColumn('risk', 'text', (c) => c.check(riskCheck('risk')))
    .addColumn('quarantined_at', 'timestamptz')
    .addColumn('quarantine_reason', 'text')
    .execute();
  // rescan's work list: versions not scanned yet.
  await sql`create index package_versions_unscanned_idx on package_versions (seq) where risk is null`.execute(
    db,
  );

  await db.schema
    .createTable('package_reports')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('package_id', 'uuid', (c) => c.notNull().references('packages.id').onDelete('cascade'))
    .addColumn('reason', 'text', (c) => c.notNull())
    .addColumn('details', 'text')
    .addColumn('client_address', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await sql`create index package_reports_created_idx on package_reports (created_at desc)`.execute(db);
  await sql`create index package_reports_package_idx on package_reports (package_id, created_at desc)`.execute(
    db,
  );

  await sql`
    create trigger packages_list_change_quarantine after update on packages for each row
    when (old.quarantined_at is distinct from new.quarantined_at)
    execute function pkgreg_note_list_change()`.execute(db);
  await listRanks(db, sql`status <> 'delisted' and quarantined_at is null`);
}

/** package_list_ranks as 2026-11-21T1150 made it, over the rows `visible` keeps. */
async function listRanks(db: Kysely<any>, visible: ReturnType<typeof sql>): Promise<void> {
  await sql`drop materialized view if exists package_list_ranks`.execute(db);
  await sql`
    create materialized view package_list_ranks as
    select id,
      (row_number() over (order by name, scope))::int as name_asc,
      (row_number() over (order by name desc, scope))::int as name_desc,
      (row_number() over (order by repo_stars, scope, name))::int as stars_asc,
      (row_number() over (order by repo_stars desc, scope, name))::int as stars_desc,
      (row_number() over (order by last_indexed_at, scope, name))::int as indexed_asc,
      (row_number() over (order by last_indexed_at desc, scope, name))::int as indexed_desc
    from packages
    where ${visible}`.execute(db);
  await sql`create unique index package_list_ranks_id_key on package_list_ranks (id)`.execute(db);
  for (const column of ['name_asc', 'name_desc', 'stars_asc', 'stars_desc', 'indexed_asc', 'indexed_desc']) {
    await sql`create unique index ${sql.id(`package_list_ranks_${column}_key`)}
      on package_list_ranks (${sql.id(column)})`.execute(db);
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  await listRanks(db, sql`status <> 'delisted'`);
  await sql`drop trigger if exists packages_list_change_quarantine on packages`.execute(db);
  await db.schema.dropTable('package_reports').execute();
  await db.schema
    .alterTable('packages')
    .dropColumn('risk')
    .dropColumn('quarantined_at')
    .dropColumn('quarantine_reason')
    .execute();
  await sql`drop index if exists package_versions_unscanned_idx`.execute(db);
  await db.schema
    .alterTable('package_versions')
    .dropColumn('risk')
    .dropColumn('findings')
    .dropColumn('scanned_at')
    .execute();
}
