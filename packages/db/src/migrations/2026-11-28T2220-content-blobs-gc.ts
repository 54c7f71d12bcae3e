import { type Kysely, sql } from 'kysely';

// Frozen in time: never import app code here, never edit after it has shipped. Add a new file instead.

// Collecting unreferenced blobs (`pnpm registry gc-blobs` and the worker's `registry.gc-blobs` job):
// a blob may be deleted once no version's file (package_version_files_sha256_idx answers that) and no
// version's archive references it. This index answers the second, for the collector's own check and
// for the foreign key's check on every blob it deletes.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`create index package_versions_archive_sha256_idx on package_versions (archive_sha256)`.execute(
    db,
  );
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop index if exists package_versions_archive_sha256_idx`.execute(db);
}
