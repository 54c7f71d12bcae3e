import { type Kysely, sql } from 'kysely';

// Frozen in time: never import app code here, never edit after it has shipped. Add a new file instead.

// A GIN index buffers new entries in a "pending list" (fastupdate, on by default) that every search has
// to read in full until a vacuum, or the 4 MB gin_pending_list_limit, merges it into the index. With
// autovacuum off (as on this machine) or behind, a registry search for a rare term at 1M packages spent
// ~6 of its ~7 ms reading 348 pending pages left by non-HOT updates; merged, the same query takes 1 ms.
// These indexes are read far more often than written, so entries now go straight into the index.
const GIN_INDEXES = ['packages_search_idx', 'memory_entries_search_idx', 'memory_entries_tags_idx'];

export async function up(db: Kysely<any>): Promise<void> {
  for (const index of GIN_INDEXES) {
    await sql`alter index ${sql.ref(index)} set (fastupdate = off)`.execute(db);
    // Merge what is pending now; with fastupdate off nothing is added to the list again.
    await sql`select gin_clean_pending_list(${index}::regclass)`.execute(db);
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const index of GIN_INDEXES) {
    await sql`alter index ${sql.ref(index)} reset (fastupdate)`.execute(db);
  }
}
