import { type Kysely, sql } from 'kysely';

// Frozen in time: never import app code here, never edit after it has shipped. Add a new file instead.
// Two costs of a member's search at 1M packages (registry-api private-search.repository.ts):
// - A member of an organisation of ten scopes read ten scopes' private positions and unioned them per
//   term on every search. The rebuild now also stores each organisation's positions under one key prefix
//   (`~<organisation id>/<key>` in package_private_search_keys), and package_private_search_groups names
//   each grouped scope's group and the group's size: a reader uses a group whose scopes it all reads, and
//   its other scopes one by one.
// - The page's 50 rows were read from packages, a probe each into a table larger than the buffer cache.
//   package_private_search_docs now holds the result columns as the rebuild saw them (a row changed since
//   is read live anyway).
// Both private tables start empty in their new shape (every private row is then searched live, as before
// the first rebuild) and the derived tables are marked stale, so the next refresh fills them.
export async function up(db: Kysely<any>): Promise<void> {
  // The registry's refresh lock ("pklr", registry-api derived-tables-refresher.ts), held to the commit:
  // a rebuild under way finishes first, so it cannot swap an old-shape table in after this one.
  await sql`select pg_advisory_xact_lock(${sql.lit(0x706b6c72)})`.execute(db);
  await sql`drop table package_private_search_docs`.execute(db);
  await sql`
    create table package_private_search_docs (
      ord int4 primary key,
      id uuid not null unique,
      scope text not null,
      name text not null,
      description text not null,
      kind text not null,
      category text,
      source_repo text not null,
      token_count int4 not null,
      verified boolean not null,
      repo_stars int4 not null,
      risk text,
      mark pg_snapshot)`.execute(db);
  await sql`truncate package_private_search_keys`.execute(db);
  await sql`
    create table package_private_search_groups (
      scope text primary key,
      grp text not null,
      size int4 not null)`.execute(db);
  await sql`update package_derived_state set change_counter = -1`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table if exists package_private_search_groups`.execute(db);
  await sql`truncate package_private_search_keys`.execute(db);
  await sql`drop table package_private_search_docs`.execute(db);
  await sql`
    create table package_private_search_docs (
      ord int4 primary key,
      id uuid not null unique,
      scope text not null,
      mark pg_snapshot)`.execute(db);
  await sql`update package_derived_state set change_counter = -1`.execute(db);
}
