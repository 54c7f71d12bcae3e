import { type Kysely, sql } from 'kysely';

// Frozen in time: never import app code here, never edit after it has shipped. Add a new file instead.

// Search at 1M packages (docs/decisions.md, "Registry search"): a broad term matches half the table, so
// ranking every match is out. Two helpers, both rebuilt (built aside, then swapped in) by registry-api's
// refresher when packages change:
// - package_search_docs: the visible packages' search vectors, physically in ranking order (stars desc,
//   scope, name), so "the first 50 matches by stars" is a short sequential read of a narrow table
//   instead of one random heap visit per candidate.
// - package_search_lexemes: documents per lexeme (ts_stat), so the API can tell a selective query
//   (answered exactly from the GIN index) from a broad one (answered from package_search_docs).
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table package_search_docs as
    select (row_number() over (order by repo_stars desc, scope, name))::int as ord, id, search_vector
    from packages where status <> 'delisted' order by repo_stars desc, scope, name`.execute(db);
  await sql`alter table package_search_docs add constraint package_search_docs_pkey primary key (ord)`.execute(
    db,
  );
  await sql`
    create table package_search_lexemes as
    select word as lexeme, ndoc from ts_stat('select search_vector from packages where status <> ''delisted''')`.execute(
    db,
  );
  await sql`alter table package_search_lexemes add constraint package_search_lexemes_pkey primary key (lexeme)`.execute(
    db,
  );
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table if exists package_search_lexemes`.execute(db);
  await sql`drop table if exists package_search_docs`.execute(db);
}
