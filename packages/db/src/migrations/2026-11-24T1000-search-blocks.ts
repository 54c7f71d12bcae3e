import { type Kysely, sql } from 'kysely';

// Frozen in time: never import app code here, never edit after it has shipped. Add a new file instead.

// Registry search with several common terms ("mo na po qu", "data tool agent code") was bound by the GIN
// scan, which decodes every posting list it is given (~25 ms for four keys of ~75k packages each at 1M),
// and the broad plan's scan in stars order could miss all-in-name matches ranked past the rows it read.
// Two posting tables in ranking positions (package_search_docs.ord), rebuilt with the other search
// tables by registry-api's refresher, intersected with the intarray extension (contrib, trusted):
// - package_search_blocks: for every search key (pkgreg_search_keys) in at least 3,000 packages, its
//   positions cut into blocks of 65,536 positions, one sorted int4[] per (key, block). A query walks
//   the blocks in order and stops once the page is settled, so it decodes a block or two per term.
// - package_search_name_keys: for every key of a name or scope lexeme, all its positions: `a` where a
//   name lexeme (weight A) gives the key, `b` a scope lexeme (weight B). The packages with every term in
//   the name (ranking tier 0) and in name + scope (tier 1) are then set operations, wherever they rank.
// Both start empty here; the refresher fills them on its next rebuild (searches use the older plans
// meanwhile), and this migration marks the derived tables stale so that rebuild happens.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`create extension if not exists intarray`.execute(db);
  // Union and intersection of sorted int4[] sets as aggregates (intarray's `|` and `&` functions).
  // Strict transition functions and no initial value: NULL inputs are skipped, the first input is the
  // state as it is (no copy through `|`), and no input at all gives NULL.
  await sql`create aggregate pkgreg_int_union(int4[]) (sfunc = _int_union, stype = int4[])`.execute(db);
  await sql`create aggregate pkgreg_int_intersect(int4[]) (sfunc = _int_inter, stype = int4[])`.execute(db);
  await sql`
    create table package_search_blocks (
      key text not null,
      block int4 not null,
      ords int4[] not null,
      primary key (key, block))`.execute(db);
  await sql`
    create table package_search_name_keys (
      key text primary key,
      a int4[] not null,
      b int4[] not null)`.execute(db);
  await sql`update package_derived_state set change_counter = -1`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table package_search_name_keys`.execute(db);
  await sql`drop table package_search_blocks`.execute(db);
  await sql`drop aggregate pkgreg_int_intersect(int4[])`.execute(db);
  await sql`drop aggregate pkgreg_int_union(int4[])`.execute(db);
}
