import { type Kysely, sql } from 'kysely';

// Frozen in time: never import app code here, never edit after it has shipped. Add a new file instead.

// Registry search: a query of one-character terms only ("a b c d e f g h") has no search key, so the
// scan plan reads up to 60k rows of package_search_docs in ranking order and tests each search vector:
// ~0.27 µs a row, 17 ms for the window at 1M. A one-character term matches exactly the packages with a
// lexeme starting with that character, so a bit per first character answers it from a narrow table at
// ~0.08 µs a row (measured on the 1M bench data), and the vector is tested only for the rows it lets
// through.
//
// pkgreg_search_initials: bit n for a lexeme starting with the n-th letter a-z, bit 26 + d for the
// digit d, and bit 36 + (code point mod 27) for any other character (shared bits: for those the table
// says "maybe" and the vector decides). The registry's search code computes the same bits for the
// query's terms (search-terms.ts, initialsMask).
//
// package_search_initials: one row per package_search_docs row, in the same order; rebuilt with the
// other search tables. Filled here from the current package_search_docs, so no search ever reads it
// out of step with them.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create function pkgreg_search_initials(v tsvector) returns int8
    language sql immutable strict parallel safe as $$
      select coalesce(bit_or(case
        when c between 'a' and 'z' then 1::int8 << (ascii(c) - 97)
        when c between '0' and '9' then 1::int8 << (26 + ascii(c) - 48)
        else 1::int8 << (36 + ascii(c) % 27) end), 0)
      from (select left(l, 1) as c from unnest(tsvector_to_array(v)) l) f
    $$`.execute(db);
  await sql`
    create table package_search_initials as
    select ord, pkgreg_search_initials(search_vector) as initials from package_search_docs order by ord`.execute(
    db,
  );
  await sql`alter table package_search_initials add constraint package_search_initials_pkey primary key (ord)`.execute(
    db,
  );
  await sql`alter table package_search_initials alter column initials set not null`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table package_search_initials`.execute(db);
  await sql`drop function pkgreg_search_initials(tsvector)`.execute(db);
}
