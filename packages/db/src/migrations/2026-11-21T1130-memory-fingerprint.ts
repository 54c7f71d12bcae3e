import { type Kysely, sql } from 'kysely';

// Frozen in time: never import app code here, never edit after it has shipped. Add a new file instead.
// Memory entries get a stable insertion order (`seq`: now() is one value per transaction, so batch
// inserts tie on created_at) and a content fingerprint for fact dedup in compaction.

export async function up(db: Kysely<any>): Promise<void> {
  // Case and whitespace do not make a fact new. Immutable so it can feed a generated column; the
  // database encoding is fixed, so convert_to is deterministic here.
  await sql`
    create or replace function pkgreg_content_fingerprint(content text) returns text
    language sql immutable parallel safe as $$
      select encode(sha256(convert_to(lower(btrim(regexp_replace(content, '\\s+', ' ', 'g'))), 'UTF8')), 'hex')
    $$`.execute(db);
  await sql`alter table memory_entries add column seq bigint generated always as identity`.execute(db);
  await sql`
    alter table memory_entries add column content_fingerprint text
    generated always as (pkgreg_content_fingerprint(content)) stored`.execute(db);
  await sql`create index memory_entries_fingerprint_idx on memory_entries (namespace, tier, content_fingerprint)
    where status = 'active'`.execute(db);
  await sql`create index memory_entries_order_idx on memory_entries (namespace, tier, created_at, seq)
    where status = 'active'`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop index if exists memory_entries_order_idx`.execute(db);
  await sql`drop index if exists memory_entries_fingerprint_idx`.execute(db);
  await sql`alter table memory_entries drop column if exists content_fingerprint`.execute(db);
  await sql`alter table memory_entries drop column if exists seq`.execute(db);
  await sql`drop function if exists pkgreg_content_fingerprint(text)`.execute(db);
}
