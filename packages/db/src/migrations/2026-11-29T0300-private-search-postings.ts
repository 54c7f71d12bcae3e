import { type Kysely, sql } from 'kysely';

// Frozen in time: never import app code here, never edit after it has shipped. Add a new file instead.

// A reader's private search read each matching row to rank and count it: a term half of a 10,000-package
// organisation holds cost 36-42 ms p95, eight times an anonymous search. Like the public search, it now
// ranks and counts from positions built with the derived tables (registry-api search-tables.repository.ts):
// package_private_search_docs numbers the visible private packages in ranking order (`ord`), and
// package_private_search_keys holds, per `<scope>/<key>` (every lexeme, and its first 2, 3 and 4
// characters), the positions holding it anywhere, in the name (`a`) and in the name or scope (`ab`).
// `mark` (on the row of ord 1 only) is the rebuild's snapshot: the rows of the reader's scopes last changed
// by a transaction it could not see (updated_xid) are searched live instead, found by
// packages_scope_changes_idx from the snapshot's xmin on; over every row, so that a package turned public
// since leaves the private count at once (packages are never deleted). Both
// tables start empty (every private row is then searched live) and the derived tables are marked stale,
// so the next refresh fills them.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table package_private_search_docs (
      ord int4 primary key,
      id uuid not null unique,
      scope text not null,
      mark pg_snapshot)`.execute(db);
  await sql`
    create table package_private_search_keys (
      key text collate "C" primary key,
      ords int4[] not null,
      a int4[] not null,
      ab int4[] not null)`.execute(db);
  await sql`create index packages_scope_changes_idx on packages (scope, updated_xid)`.execute(db);
  await sql`update package_derived_state set change_counter = -1`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop index if exists packages_scope_changes_idx`.execute(db);
  await sql`drop table if exists package_private_search_keys`.execute(db);
  await sql`drop table if exists package_private_search_docs`.execute(db);
}
