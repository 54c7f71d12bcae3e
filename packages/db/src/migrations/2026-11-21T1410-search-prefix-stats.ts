import { type Kysely, sql } from 'kysely';

// Frozen in time: never import app code here, never edit after it has shipped. Add a new file instead.

// Registry search planning asks, per query term, how many documents its prefix reaches and how many
// stored lexemes it expands to. For a short prefix that meant summing thousands of rows of
// package_search_lexemes on every search ("qu lo mo" at 1M packages: 13 ms, 6.5 without the sums). package_search_prefixes holds
// the answer for every 2- to 4-character prefix, derived from package_search_lexemes and rebuilt with it
// by registry-api's refresher.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table package_search_prefixes as
    select left(lexeme, n) as prefix, sum(ndoc)::bigint as docs, count(*)::int as lexemes
    from package_search_lexemes, generate_series(2, 4) n
    where length(lexeme) >= n
    group by 1`.execute(db);
  await sql`alter table package_search_prefixes add constraint package_search_prefixes_pkey primary key (prefix)`.execute(
    db,
  );
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table package_search_prefixes`.execute(db);
}
