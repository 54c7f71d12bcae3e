import { type Kysely, sql } from 'kysely';

// Frozen in time: never import app code here, never edit after it has shipped. Add a new file instead.

// Deep list pages must cost what page 1 costs, so OFFSET (which walks every skipped row) is out.
// package_list_ranks holds each visible package's dense position in each of the six list orders; a page
// is then an index range `ord between offset+1 and offset+pageSize`. It is a materialized view refreshed
// CONCURRENTLY (readers never block) by the registry-api when `package_list_changes` moves: the trigger
// below bumps that sequence on every change that can move a package in a list (insert, delete, or an
// update of a sort key or status). A sequence, not a flag row, so indexer transactions never queue on it.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`create sequence package_list_changes`.execute(db);
  await sql`
    create or replace function pkgreg_note_list_change() returns trigger language plpgsql as $$
    begin
      perform nextval('package_list_changes');
      return null;
    end $$`.execute(db);
  await sql`
    create trigger packages_list_change_stmt after insert or delete or truncate on packages
    for each statement execute function pkgreg_note_list_change()`.execute(db);
  // Row level with WHEN, so the download flusher's download_count updates never trigger a refresh.
  await sql`
    create trigger packages_list_change_row after update on packages for each row
    when (old.name is distinct from new.name or old.scope is distinct from new.scope
      or old.repo_stars is distinct from new.repo_stars
      or old.last_indexed_at is distinct from new.last_indexed_at
      or old.status is distinct from new.status)
    execute function pkgreg_note_list_change()`.execute(db);

  // Ties break by scope, then name (ascending) in every order, so pages never overlap or skip.
  await sql`
    create materialized view package_list_ranks as
    select id,
      (row_number() over (order by name, scope))::int as name_asc,
      (row_number() over (order by name desc, scope))::int as name_desc,
      (row_number() over (order by repo_stars, scope, name))::int as stars_asc,
      (row_number() over (order by repo_stars desc, scope, name))::int as stars_desc,
      (row_number() over (order by last_indexed_at, scope, name))::int as indexed_asc,
      (row_number() over (order by last_indexed_at desc, scope, name))::int as indexed_desc
    from packages
    where status <> 'delisted'`.execute(db);
  await sql`create unique index package_list_ranks_id_key on package_list_ranks (id)`.execute(db);
  for (const column of ['name_asc', 'name_desc', 'stars_asc', 'stars_desc', 'indexed_asc', 'indexed_desc']) {
    await sql`create unique index ${sql.id(`package_list_ranks_${column}_key`)}
      on package_list_ranks (${sql.id(column)})`.execute(db);
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop materialized view if exists package_list_ranks`.execute(db);
  await sql`drop trigger if exists packages_list_change_row on packages`.execute(db);
  await sql`drop trigger if exists packages_list_change_stmt on packages`.execute(db);
  await sql`drop function if exists pkgreg_note_list_change()`.execute(db);
  await sql`drop sequence if exists package_list_changes`.execute(db);
}
