import { type Kysely, sql } from 'kysely';

// Frozen in time: never import app code here, never edit after it has shipped. Add a new file instead.

// Registry search with several broad terms ("da ze ko"): each term's prefix expands to thousands of
// lexemes, so neither an OR of them nor a prefix operand is a cheap GIN lookup (a prefix operand ANDed
// with others measured 0.7-9 s at 1M packages), and the broad plan read up to 60k rows in ranking order
// looking for a rare combination, missing the matches ranked past them.
//
// Search keys: every lexeme of a package plus its first 2, 3 and 4 characters. A term of 2 to 4
// characters is then ONE exact key holding exactly the packages it matches; a longer broad term's first
// 4 characters are a superset (the query re-checks the real terms). All of a query's operands go to
// this one index, so the GIN scan intersects their posting lists itself and emits only the packages
// holding every one (a BitmapAnd of two indexes builds each side's whole bitmap: 58 ms for one common
// lexeme at 1M). It replaces the GIN index on search_vector, which then has no reader. An expression
// index: no column, no table rewrite, and the download fold's HOT updates leave it alone.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create function pkgreg_search_keys(v tsvector) returns tsvector
    language sql immutable strict parallel safe as $$
      select array_to_tsvector(coalesce(array(
        select distinct k from unnest(tsvector_to_array(v)) l,
          lateral (select l union all select left(l, n) from generate_series(2, 4) n where length(l) > n) x(k)
      ), '{}'))
    $$`.execute(db);
  await sql`
    create index packages_search_keys_idx on packages
    using gin (pkgreg_search_keys(search_vector)) with (fastupdate = off)`.execute(db);
  await sql`drop index packages_search_idx`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`create index packages_search_idx on packages using gin (search_vector) with (fastupdate = off)`.execute(
    db,
  );
  await sql`drop index packages_search_keys_idx`.execute(db);
  await sql`drop function pkgreg_search_keys(tsvector)`.execute(db);
}
