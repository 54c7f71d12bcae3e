import { type Kysely, sql } from 'kysely';

// Frozen in time: never import app code here, never edit after it has shipped. Add a new file instead.

// Track calls are group-committed (registry-api: download-recorder.ts). A batch used to write one delta
// row per package in it, each with a foreign-key check that took a KEY SHARE lock on the package's row
// (a WAL record per delta, a multixact when two batches or a batch and the fold met on a hot package),
// and the fold then deleted every one of those rows again. Now a batch is ONE row holding parallel
// arrays (package ids, counts): its cost no longer grows with the packages in it, and the fold reads
// and deletes a few rows per second instead of thousands. No foreign key: the insert itself joins
// packages, and the fold's UPDATE ... FROM skips an id that is gone.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('package_download_batches')
    .addColumn('id', 'bigserial', (c) => c.primaryKey())
    .addColumn('package_ids', sql`uuid[]`, (c) => c.notNull())
    .addColumn('counts', sql`integer[]`, (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addCheckConstraint(
      'package_download_batches_same_length',
      sql`cardinality(package_ids) = cardinality(counts) and cardinality(package_ids) > 0`,
    )
    .execute();
  // Deltas not folded yet move over as one batch per package, so no answered call is lost.
  await sql`
    insert into package_download_batches (package_ids, counts)
    select array[package_id], array[sum(delta)::int] from package_download_deltas group by package_id`.execute(
    db,
  );
  await db.schema.dropTable('package_download_deltas').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('package_download_deltas')
    .addColumn('id', 'bigserial', (c) => c.primaryKey())
    .addColumn('package_id', 'uuid', (c) => c.notNull().references('packages.id').onDelete('cascade'))
    .addColumn('delta', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await sql`
    insert into package_download_deltas (package_id, delta)
    select u.package_id, sum(u.n)::int from package_download_batches b, unnest(b.package_ids, b.counts) as u(package_id, n)
    where exists (select 1 from packages p where p.id = u.package_id)
    group by u.package_id`.execute(db);
  await db.schema.dropTable('package_download_batches').execute();
}
