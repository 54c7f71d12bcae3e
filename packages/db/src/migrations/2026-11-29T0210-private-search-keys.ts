import { type Kysely, sql } from 'kysely';

// Frozen in time: never import app code here, never edit after it has shipped. Add a new file instead.

// A reader's private search (docs/search.md, "Private packages") read every private row of its scopes
// and tested its vector: 45 ms for a member of a 10,000-package organisation searching "data", ten
// times an anonymous search. Keyed like the public search keys (every lexeme and its first 2, 3 and 4
// characters) but per scope, `<scope>/<key>`, the GIN index finds the packages of the reader's scopes
// holding every term from their posting lists alone. A scope is [a-z0-9-], so the `/` ends it: a key of
// one scope never matches another's. Only rows a search may show are indexed (private, listed, not
// quarantined). Words are cut to 100 characters, far below the 2047-byte key limit.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create function pkgreg_private_search_keys(scope text, v tsvector) returns tsvector
    language sql immutable strict parallel safe as $$
      select array_to_tsvector(coalesce(array(
        select distinct scope || '/' || k.k
        from unnest(tsvector_to_array(v)) u(lexeme),
          lateral (select left(u.lexeme, 100) union all
                   select left(u.lexeme, n) from generate_series(2, 4) n where length(u.lexeme) > n) k(k)
      ), '{}'))
    $$`.execute(db);
  await sql`
    create index packages_private_search_keys_idx on packages
    using gin (pkgreg_private_search_keys(scope, search_vector)) with (fastupdate = off)
    where private and status <> 'delisted' and quarantined_at is null`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop index if exists packages_private_search_keys_idx`.execute(db);
  await sql`drop function if exists pkgreg_private_search_keys(text, tsvector)`.execute(db);
}
