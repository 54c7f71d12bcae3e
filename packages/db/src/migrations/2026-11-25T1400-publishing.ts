import { type Kysely, sql } from 'kysely';

// Frozen in time: never import app code here, never edit after it has shipped. Add a new file instead.

// Publishing (docs/publishing.md): authors publish with a proof of control of the repository.
//
// scope_owners: a scope belongs to the code-host account (numeric id) that first published or had
// indexed a repository under it; a renamed account keeps it, a new account taking the freed login gets
// nothing. One scope per account.
//
// publish_runs: a publish (or a webhook's re-index) answered 202 before the worker runs it; the worker
// moves it to running, then succeeded (with the per-skill result) or failed.
//
// source_webhooks: per repository (by the code host's repository id, which survives renames), the salt
// its webhook secret is derived from: secret = HMAC-SHA256(WEBHOOK_SECRET_KEY, salt). The secret itself
// is never stored.
//
// packages gains the owner's deprecation (apart from `status`, which the indexer rewrites from the
// SKILL.md on every run); package_version_yanks holds yanks apart from the versions, which stay
// never-updated. indexed_sources remembers the branch a publish asked for and the repository id.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('scope_owners')
    .addColumn('scope', 'text', (c) => c.primaryKey())
    .addColumn('owner_id', 'bigint', (c) => c.notNull().unique())
    .addColumn('owner_login', 'text', (c) => c.notNull())
    .addColumn('bound_by', 'text', (c) => c.notNull().check(sql`bound_by in ('publish', 'index')`))
    .addColumn('bound_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();

  await db.schema
    .createTable('publish_runs')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('repository', 'text', (c) => c.notNull())
    .addColumn('locator', 'text', (c) => c.notNull())
    .addColumn('scope', 'text', (c) => c.notNull())
    .addColumn('ref', 'text')
    .addColumn('proof', 'text', (c) => c.notNull().check(sql`proof in ('oidc', 'token', 'webhook')`))
    .addColumn('status', 'text', (c) =>
      c.notNull().defaultTo('queued').check(sql`status in ('queued', 'running', 'succeeded', 'failed')`),
    )
    .addColumn('result', 'jsonb')
    .addColumn('error', 'text')
    .addColumn('indexing_run_id', 'uuid', (c) => c.references('indexing_runs.id').onDelete('set null'))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('started_at', 'timestamptz')
    .addColumn('finished_at', 'timestamptz')
    .execute();
  await sql`create index publish_runs_locator_idx on publish_runs (locator, created_at desc)`.execute(db);

  await db.schema
    .createTable('source_webhooks')
    .addColumn('repository_id', 'bigint', (c) => c.primaryKey())
    .addColumn('locator', 'text', (c) => c.notNull())
    .addColumn('secret_salt', 'bytea', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('rotated_at', 'timestamptz')
    .execute();

  await db.schema
    .alterTable('packages')
    .addColumn('deprecated_at', 'timestamptz')
    .addColumn('deprecation_message', 'text')
    .execute();

  await db.schema
    .createTable('package_version_yanks')
    .addColumn('version_id', 'uuid', (c) =>
      c.primaryKey().references('package_versions.id').onDelete('cascade'),
    )
    .addColumn('reason', 'text')
    .addColumn('yanked_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();

  await db.schema
    .alterTable('indexed_sources')
    .addColumn('ref', 'text')
    .addColumn('repository_id', 'bigint')
    .execute();
  await sql`create index indexed_sources_repository_id_idx on indexed_sources (repository_id) where repository_id is not null`.execute(
    db,
  );
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop index if exists indexed_sources_repository_id_idx`.execute(db);
  await db.schema.alterTable('indexed_sources').dropColumn('ref').dropColumn('repository_id').execute();
  await db.schema.dropTable('package_version_yanks').execute();
  await db.schema
    .alterTable('packages')
    .dropColumn('deprecated_at')
    .dropColumn('deprecation_message')
    .execute();
  await db.schema.dropTable('source_webhooks').execute();
  await db.schema.dropTable('publish_runs').execute();
  await db.schema.dropTable('scope_owners').execute();
}
