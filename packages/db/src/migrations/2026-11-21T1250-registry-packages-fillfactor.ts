import { type Kysely, sql } from 'kysely';

// Frozen in time: never import app code here, never edit after it has shipped. Add a new file instead.

// The download flusher rewrites packages rows (download_count, row_version) all day. With free space
// left on each page those updates can be HOT (no new entry in any of the table's indexes, the GIN one
// included); at the default fillfactor 100 every fold of a package would touch all of them.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table packages set (fillfactor = 85)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table packages reset (fillfactor)`.execute(db);
}
