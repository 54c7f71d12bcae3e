import { type Kysely, sql } from 'kysely';

// Frozen in time: never import app code here, never edit after it has shipped. Add a new file instead.

export async function up(db: Kysely<any>): Promise<void> {
  // array_to_string is only STABLE; generated columns need an IMMUTABLE expression.
  await sql`
    create or replace function pkgreg_tags_text(tags text[]) returns text
    language sql immutable parallel safe as $$ select array_to_string(tags, ' ') $$`.execute(db);

  // Bumps row_version on every update so ETags follow the row, not a hash of the body.
  await sql`
    create or replace function pkgreg_bump_row_version() returns trigger language plpgsql as $$
    begin
      new.row_version := old.row_version + 1;
      new.updated_at := now();
      return new;
    end $$`.execute(db);

  await db.schema
    .createTable('packages')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('scope', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('kind', 'text', (c) =>
      c.notNull().defaultTo('skill').check(sql`kind in ('skill', 'composite', 'workflow', 'app')`),
    )
    .addColumn('category', 'text')
    .addColumn('tags', sql`text[]`, (c) => c.notNull().defaultTo(sql`'{}'`))
    .addColumn('compatibility', sql`text[]`, (c) => c.notNull().defaultTo(sql`'{}'`))
    .addColumn('language', 'text')
    .addColumn('version', 'text')
    .addColumn('source_repo', 'text', (c) => c.notNull())
    .addColumn('source_path', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('source_ref', 'text', (c) => c.notNull().defaultTo('main'))
    .addColumn('repo_url', 'text')
    .addColumn('homepage_url', 'text')
    .addColumn('repo_owner', 'text', (c) => c.notNull())
    .addColumn('author', 'text')
    .addColumn('repo_stars', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('license', 'text')
    .addColumn('skill_md_raw', 'text', (c) => c.notNull())
    .addColumn('frontmatter', 'jsonb', (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
    .addColumn('allowed_tools', sql`text[]`, (c) => c.notNull().defaultTo(sql`'{}'`))
    .addColumn('token_count', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('file_count', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('progressive_disclosure', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('download_count', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('dep_count', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('dependant_count', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('verified', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('featured', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('status', 'text', (c) =>
      c.notNull().defaultTo('active').check(sql`status in ('active', 'deprecated', 'delisted')`),
    )
    .addColumn('hosted', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('first_indexed_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('last_indexed_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('last_commit_sha', 'text')
    .addColumn('row_version', 'bigint', (c) => c.notNull().defaultTo(1))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addUniqueConstraint('packages_scope_name_key', ['scope', 'name'])
    .execute();

  // Names and scopes split on - / @ _ . with the `simple` config (stems break prefixes on names);
  // descriptions use `english`. Weights: name A, scope B, description C.
  await sql`
    alter table packages add column search_vector tsvector generated always as (
      setweight(to_tsvector('simple'::regconfig, regexp_replace(name, '[-/@_.]+', ' ', 'g')), 'A') ||
      setweight(to_tsvector('simple'::regconfig, regexp_replace(scope, '[-/@_.]+', ' ', 'g')), 'B') ||
      setweight(to_tsvector('english'::regconfig, description), 'C')
    ) stored`.execute(db);
  await sql`create index packages_search_idx on packages using gin (search_vector)`.execute(db);
  await sql`create index packages_stars_idx on packages (repo_stars, scope, name)`.execute(db);
  await sql`create index packages_indexed_idx on packages (last_indexed_at, scope, name)`.execute(db);
  await sql`create index packages_source_repo_idx on packages (source_repo)`.execute(db);
  await sql`
    create trigger packages_row_version before update on packages
    for each row execute function pkgreg_bump_row_version()`.execute(db);

  // Track calls land here insert-only (no hot-row contention); a flusher folds them into download_count.
  await db.schema
    .createTable('package_download_deltas')
    .addColumn('id', 'bigserial', (c) => c.primaryKey())
    .addColumn('package_id', 'uuid', (c) => c.notNull().references('packages.id').onDelete('cascade'))
    .addColumn('delta', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();

  await db.schema
    .createTable('indexed_sources')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('kind', 'text', (c) => c.notNull().check(sql`kind in ('github', 'git')`))
    .addColumn('locator', 'text', (c) => c.notNull())
    .addColumn('source_repo', 'text', (c) => c.notNull())
    .addColumn('default_branch', 'text')
    .addColumn('etags', 'jsonb', (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('last_run_at', 'timestamptz')
    .addUniqueConstraint('indexed_sources_kind_locator_key', ['kind', 'locator'])
    .execute();

  await db.schema
    .createTable('indexing_runs')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('source_id', 'uuid', (c) => c.references('indexed_sources.id').onDelete('set null'))
    .addColumn('locator', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) =>
      c.notNull().defaultTo('running').check(sql`status in ('running', 'succeeded', 'failed')`),
    )
    .addColumn('indexed', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('updated', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('unchanged', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('delisted', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('rejected', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('error', 'text')
    .addColumn('started_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('finished_at', 'timestamptz')
    .execute();

  await db.schema
    .createTable('indexing_rejections')
    .addColumn('id', 'bigserial', (c) => c.primaryKey())
    .addColumn('run_id', 'uuid', (c) => c.notNull().references('indexing_runs.id').onDelete('cascade'))
    .addColumn('path', 'text', (c) => c.notNull())
    .addColumn('reason', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();

  await db.schema
    .createTable('memory_entries')
    .addColumn('entry_id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('namespace', 'text', (c) => c.notNull())
    .addColumn('tier', 'text', (c) => c.notNull().check(sql`tier in ('stm', 'ltm')`))
    .addColumn('content', 'text', (c) => c.notNull())
    .addColumn('tags', sql`text[]`, (c) => c.notNull().defaultTo(sql`'{}'`))
    .addColumn('metadata', 'jsonb', (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
    .addColumn('status', 'text', (c) =>
      c.notNull().defaultTo('active').check(sql`status in ('active', 'superseded', 'deleted')`),
    )
    .addColumn('supersedes_entry_id', 'uuid', (c) => c.references('memory_entries.entry_id'))
    .addColumn('superseded_by_entry_id', 'uuid', (c) => c.references('memory_entries.entry_id'))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('deleted_at', 'timestamptz')
    .execute();
  await sql`
    alter table memory_entries add column search_vector tsvector generated always as (
      setweight(to_tsvector('english'::regconfig, content), 'A') ||
      setweight(to_tsvector('simple'::regconfig, pkgreg_tags_text(tags)), 'B')
    ) stored`.execute(db);
  await sql`create index memory_entries_search_idx on memory_entries using gin (search_vector)`.execute(db);
  await sql`create index memory_entries_tags_idx on memory_entries using gin (tags)`.execute(db);
  await sql`create index memory_entries_ns_idx on memory_entries (namespace, tier, status, created_at)`.execute(
    db,
  );
  // A predecessor can be superseded once: a second concurrent supersede of it fails instead of forking.
  await sql`create unique index memory_entries_supersedes_key on memory_entries (supersedes_entry_id)
    where supersedes_entry_id is not null`.execute(db);

  await db.schema
    .createTable('tasks')
    .addColumn('task_id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('tool_name', 'text', (c) => c.notNull())
    .addColumn('subject_namespace', 'text', (c) => c.notNull())
    .addColumn('client_id', 'text')
    .addColumn('canonical_run_id', 'uuid', (c) => c.notNull().defaultTo(sql`gen_random_uuid()`))
    .addColumn('status', 'text', (c) =>
      c.notNull().defaultTo('queued').check(sql`status in ('queued', 'running', 'completed', 'failed')`),
    )
    .addColumn('input', 'jsonb', (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
    .addColumn('result', 'jsonb')
    .addColumn('error', 'jsonb')
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('submitted_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('started_at', 'timestamptz')
    .addColumn('finished_at', 'timestamptz')
    .addColumn('expires_at', 'timestamptz')
    .execute();
  await sql`create index tasks_subject_idx on tasks (subject_namespace, submitted_at)`.execute(db);
  await sql`create index tasks_expires_idx on tasks (expires_at) where expires_at is not null`.execute(db);

  await db.schema
    .createTable('idempotency_records')
    .addColumn('subject_namespace', 'text', (c) => c.notNull())
    .addColumn('tool_name', 'text', (c) => c.notNull())
    .addColumn('idempotency_key', 'text', (c) => c.notNull())
    .addColumn('request_hash', 'text', (c) => c.notNull())
    .addColumn('result', 'jsonb')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('expires_at', 'timestamptz', (c) => c.notNull())
    .addPrimaryKeyConstraint('idempotency_records_pkey', [
      'subject_namespace',
      'tool_name',
      'idempotency_key',
    ])
    .execute();
  await sql`create index idempotency_records_expires_idx on idempotency_records (expires_at)`.execute(db);

  await db.schema
    .createTable('oauth_clients')
    .addColumn('client_id', 'text', (c) => c.primaryKey())
    .addColumn('client_secret_hash', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('allowed_scopes', sql`text[]`, (c) => c.notNull().defaultTo(sql`'{}'`))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('disabled_at', 'timestamptz')
    .execute();

  await db.schema
    .createTable('oauth_signing_keys')
    .addColumn('kid', 'text', (c) => c.primaryKey())
    .addColumn('alg', 'text', (c) => c.notNull())
    .addColumn('public_jwk', 'jsonb', (c) => c.notNull())
    .addColumn('private_jwk', 'jsonb', (c) => c.notNull())
    .addColumn('status', 'text', (c) =>
      c.notNull().defaultTo('active').check(sql`status in ('active', 'retiring', 'retired')`),
    )
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('retired_at', 'timestamptz')
    .execute();

  await db.schema
    .createTable('audit_records')
    .addColumn('id', 'bigserial', (c) => c.primaryKey())
    .addColumn('at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('request_id', 'text', (c) => c.notNull())
    .addColumn('namespace', 'text')
    .addColumn('client_id', 'text')
    .addColumn('method', 'text')
    .addColumn('tool', 'text')
    .addColumn('outcome', 'text', (c) => c.notNull().check(sql`outcome in ('ok', 'rejected', 'error')`))
    .addColumn('reason', 'text')
    .addColumn('http_status', 'integer', (c) => c.notNull())
    .addColumn('latency_ms', 'real', (c) => c.notNull())
    .addColumn('backend', 'text')
    .execute();
  await sql`create index audit_records_ns_idx on audit_records (namespace, at desc)`.execute(db);
  await sql`create index audit_records_at_idx on audit_records (at desc)`.execute(db);

  await db.schema
    .createTable('quarantined_sources')
    .addColumn('namespace', 'text', (c) => c.primaryKey())
    .addColumn('state', 'text', (c) => c.notNull().check(sql`state in ('quarantined', 'purged')`))
    .addColumn('reason', 'text')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of [
    'quarantined_sources',
    'audit_records',
    'oauth_signing_keys',
    'oauth_clients',
    'idempotency_records',
    'tasks',
    'memory_entries',
    'indexing_rejections',
    'indexing_runs',
    'indexed_sources',
    'package_download_deltas',
    'packages',
  ]) {
    await db.schema.dropTable(table).ifExists().execute();
  }
  await sql`drop function if exists pkgreg_bump_row_version()`.execute(db);
  await sql`drop function if exists pkgreg_tags_text(text[])`.execute(db);
}
