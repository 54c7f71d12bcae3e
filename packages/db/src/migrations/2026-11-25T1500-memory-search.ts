import { type Kysely, sql } from 'kysely';

// Frozen in time: never import app code here, never edit after it has shipped. Add a new file instead.

// Memory search with bounded work (docs/decisions.md, Memory search).
//
// memory_entries_recent_idx: active entries of a namespace newest first, both tiers together. A search
// reads its "window" (the newest N entries) from it; the per-tier order index cannot give one order over
// two tiers (Postgres plans a sort of the whole namespace for the union of two backward scans).
//
// pkgreg_memory_search_keys: the search vector's words as GIN keys that carry the namespace (8 hex
// characters of md5(namespace)) and the field (`c` content, `t` tags). The global GIN index on
// search_vector decoded every namespace's postings of a word: a word common elsewhere cost a small
// namespace milliseconds per search (a 1,000-entry namespace took 12-16 ms for a word 52,000 entries of
// other namespaces held). Keyed by namespace, a prefix query decodes only that namespace's postings.
// Words are cut to 100 characters (query terms are at most 64, so a cut key still matches every prefix
// query its word matches) to stay far below the 2047-byte lexeme limit with the 9-character prefix. The
// plain index on search_vector is then unused and dropped.
//
// memory_embeddings: optional semantic ranking stores one embedding per entry (float32 little-endian,
// unit length) beside it, written by the runtime worker. pgvector is not installed on the target
// PostgreSQL, and cosine is only computed over a bounded candidate set (in the service), so bytea is
// enough and keeps the extension optional.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create function pkgreg_memory_search_keys(namespace text, v tsvector) returns tsvector
    language sql immutable strict parallel safe as $$
      select array_to_tsvector(coalesce(array(
        select h.p || x.f || left(u.lexeme, 100)
        from (select left(md5(namespace), 8) as p) h, unnest(v) u,
          lateral (select 'c' where u.weights is null or 'A' = any(u.weights)
                   union all select 't' where 'B' = any(u.weights)) x(f)
      ), '{}'))
    $$`.execute(db);
  await sql`
    create index memory_entries_search_keys_idx on memory_entries
    using gin (pkgreg_memory_search_keys(namespace, search_vector)) with (fastupdate = off)`.execute(db);
  await sql`drop index if exists memory_entries_search_idx`.execute(db);
  await sql`
    create index memory_entries_recent_idx on memory_entries (namespace, created_at, seq)
    where status = 'active'`.execute(db);

  await db.schema
    .createTable('memory_embeddings')
    .addColumn('entry_id', 'uuid', (c) =>
      c.primaryKey().references('memory_entries.entry_id').onDelete('cascade'),
    )
    .addColumn('model', 'text', (c) => c.notNull())
    .addColumn('dimensions', 'integer', (c) => c.notNull())
    .addColumn('embedding', 'bytea', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('memory_embeddings').ifExists().execute();
  await sql`drop index if exists memory_entries_recent_idx`.execute(db);
  await sql`create index if not exists memory_entries_search_idx on memory_entries using gin (search_vector)
    with (fastupdate = off)`.execute(db);
  await sql`drop index if exists memory_entries_search_keys_idx`.execute(db);
  await sql`drop function if exists pkgreg_memory_search_keys(text, tsvector)`.execute(db);
}
