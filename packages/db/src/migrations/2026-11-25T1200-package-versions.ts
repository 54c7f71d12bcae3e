import { type Kysely, sql } from 'kysely';

// Frozen in time: never import app code here, never edit after it has shipped. Add a new file instead.

// A package becomes a series of immutable versions, each the whole skill folder (docs/versions.md).
//
// content_blobs: every file's bytes and every version's archive, stored once per SHA-256, so a file
// shared by versions or skills is one row. `git_sha1` (git's blob id of the same bytes) lets the
// indexer ask "do we hold this blob?" with the ids a tree listing gives, before reading anything.
//
// package_versions: one row per version; never updated. `seq` orders them (created_at ties inside a
// transaction). package_version_files: the folder's manifest.
//
// packages gains the latest version's `warnings` and an operator removal (`removed_at`, with its
// reason): a removed package's versions answer 410, where a delisted one's stay fetchable.
// indexed_sources remembers whether the operator asked for skills under hidden folders, so scheduled
// re-indexing keeps them.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('content_blobs')
    .addColumn('sha256', 'text', (c) => c.primaryKey())
    .addColumn('git_sha1', 'text', (c) => c.notNull())
    .addColumn('size', 'bigint', (c) => c.notNull())
    .addColumn('bytes', 'bytea', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await sql`create unique index content_blobs_git_sha1_idx on content_blobs (git_sha1)`.execute(db);

  await db.schema
    .createTable('package_versions')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('package_id', 'uuid', (c) => c.notNull().references('packages.id').onDelete('cascade'))
    .addColumn('seq', 'bigint', (c) => c.notNull().generatedAlwaysAsIdentity())
    .addColumn('version', 'text', (c) => c.notNull())
    .addColumn('declared_version', 'text')
    .addColumn('digest', 'text', (c) => c.notNull())
    .addColumn('integrity', 'text', (c) => c.notNull())
    .addColumn('archive_sha256', 'text', (c) => c.notNull().references('content_blobs.sha256'))
    .addColumn('file_count', 'integer', (c) => c.notNull())
    .addColumn('total_bytes', 'bigint', (c) => c.notNull())
    .addColumn('source_commit', 'text')
    .addColumn('warnings', 'jsonb', (c) => c.notNull().defaultTo(sql`'[]'::jsonb`))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addUniqueConstraint('package_versions_package_version_key', ['package_id', 'version'])
    .execute();
  await sql`create index package_versions_package_seq_idx on package_versions (package_id, seq desc)`.execute(
    db,
  );

  await db.schema
    .createTable('package_version_files')
    .addColumn('version_id', 'uuid', (c) => c.notNull().references('package_versions.id').onDelete('cascade'))
    .addColumn('path', 'text', (c) => c.notNull())
    .addColumn('size', 'bigint', (c) => c.notNull())
    .addColumn('sha256', 'text', (c) => c.notNull().references('content_blobs.sha256'))
    .addColumn('git_sha1', 'text', (c) => c.notNull())
    .addColumn('executable', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('link_target', 'text')
    .addPrimaryKeyConstraint('package_version_files_pkey', ['version_id', 'path'])
    .execute();
  await sql`create index package_version_files_sha256_idx on package_version_files (sha256)`.execute(db);

  await db.schema
    .alterTable('packages')
    .addColumn('warnings', 'jsonb', (c) => c.notNull().defaultTo(sql`'[]'::jsonb`))
    .addColumn('removed_at', 'timestamptz')
    .addColumn('removal_reason', 'text')
    .execute();
  await db.schema
    .alterTable('indexed_sources')
    .addColumn('include_hidden', 'boolean', (c) => c.notNull().defaultTo(false))
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('indexed_sources').dropColumn('include_hidden').execute();
  await db.schema
    .alterTable('packages')
    .dropColumn('warnings')
    .dropColumn('removed_at')
    .dropColumn('removal_reason')
    .execute();
  await db.schema.dropTable('package_version_files').execute();
  await db.schema.dropTable('package_versions').execute();
  await db.schema.dropTable('content_blobs').execute();
}
