import { type Kysely, sql } from 'kysely';

// Frozen in time: never import app code here, never edit after it has shipped. Add a new file instead.

// Private packages leave every table derived for reading at scale (docs/search.md, docs/caching.md):
// the list positions and the popularity positions are rebuilt over public packages only, so anonymous
// plans, counts and positions never see a private one; a reader with access gets its private packages
// merged in by the API. Search's tables follow through the API's rebuild (search-tables.repository.ts).
//
// - A change of `private` counts as a list change (like a quarantine), so the refresher rebuilds every
//   derived table and a package turning private leaves them within one refresh (the read paths filter
//   it live meanwhile).
// - `was_public`: the package has been public at some point. The sync feed lists a package that turned
//   private as removed (mirrors drop it), but never names one that was private from its first row.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create trigger packages_list_change_private after update on packages for each row
    when (old.private is distinct from new.private)
    execute function pkgreg_note_list_change()`.execute(db);

  await sql`alter table packages add column was_public boolean not null default true`.execute(db);
  await sql`
    create function pkgreg_note_was_public() returns trigger language plpgsql as $$
    begin
      if tg_op = 'INSERT' then
        new.was_public := not new.private;
      else
        new.was_public := old.was_public or not new.private;
      end if;
      return new;
    end $$`.execute(db);
  // After packages_private (2026-11-29T0100; triggers of a kind fire in name order), which derives
  // `private` from visibility and scope: the columns listed are those that can change it.
  await sql`
    create trigger packages_was_public before insert or update of private, visibility, scope on packages
    for each row execute function pkgreg_note_was_public()`.execute(db);

  await listRanks(db, sql`status <> 'delisted' and quarantined_at is null and not private`);
  await popularityFunction(db, sql`p.status <> 'delisted' and p.quarantined_at is null and not p.private`);
}

/** package_list_ranks as 2026-11-25T1300 made it, over the rows `visible` keeps. */
async function listRanks(db: Kysely<any>, visible: ReturnType<typeof sql>): Promise<void> {
  await sql`drop materialized view if exists package_list_ranks`.execute(db);
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
    where ${visible}`.execute(db);
  await sql`create unique index package_list_ranks_id_key on package_list_ranks (id)`.execute(db);
  for (const column of ['name_asc', 'name_desc', 'stars_asc', 'stars_desc', 'indexed_asc', 'indexed_desc']) {
    await sql`create unique index ${sql.id(`package_list_ranks_${column}_key`)}
      on package_list_ranks (${sql.id(column)})`.execute(db);
  }
}

/** pkgreg_refresh_popularity_ranks as 2026-11-28T2210 made it, over the rows `visible` keeps. */
async function popularityFunction(db: Kysely<any>, visible: ReturnType<typeof sql>): Promise<void> {
  await sql`
    create or replace function pkgreg_refresh_popularity_ranks(fold_counter bigint, fold_day date)
    returns void language plpgsql as $$
    declare
      ord text;
      orders constant text[] := array['downloads_asc', 'downloads_desc', 'trending_asc', 'trending_desc'];
    begin
      drop table if exists package_popularity_ranks_next;
      create table package_popularity_ranks_next as
      with today as (select (now() at time zone 'UTC')::date as day),
      trending as (
        select d.package_id, sum(d.count * (7 - (t.day - d.day)))::bigint as score
        from package_downloads_daily d, today t
        where d.day > t.day - 7 and d.day <= t.day
        group by d.package_id
      )
      select p.id,
        (row_number() over (order by p.unique_download_count, p.scope, p.name))::int as downloads_asc,
        (row_number() over (order by p.unique_download_count desc, p.scope, p.name))::int as downloads_desc,
        (row_number() over (order by coalesce(tr.score, 0), p.scope, p.name))::int as trending_asc,
        (row_number() over (order by coalesce(tr.score, 0) desc, p.scope, p.name))::int as trending_desc
      from packages p left join trending tr on tr.package_id = p.id
      where ${visible};
      alter table package_popularity_ranks_next
        add constraint package_popularity_ranks_next_pkey primary key (id);
      foreach ord in array orders loop
        execute format('create unique index %I on package_popularity_ranks_next (%I)',
          'package_popularity_ranks_next_' || ord || '_key', ord);
      end loop;
      -- Statistics for the planner: without them a page by these orders is planned as a scan, and
      -- autovacuum may be off.
      analyze package_popularity_ranks_next;
      drop table package_popularity_ranks;
      alter table package_popularity_ranks_next rename to package_popularity_ranks;
      alter index package_popularity_ranks_next_pkey rename to package_popularity_ranks_pkey;
      foreach ord in array orders loop
        execute format('alter index %I rename to %I',
          'package_popularity_ranks_next_' || ord || '_key', 'package_popularity_ranks_' || ord || '_key');
      end loop;
      insert into package_derived_state (id, change_counter, popularity_counter, popularity_day)
      values (true, -1, fold_counter, fold_day)
      on conflict (id) do update
        set popularity_counter = excluded.popularity_counter, popularity_day = excluded.popularity_day;
    end $$`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await popularityFunction(db, sql`p.status <> 'delisted' and p.quarantined_at is null`);
  await listRanks(db, sql`status <> 'delisted' and quarantined_at is null`);
  await sql`drop trigger if exists packages_was_public on packages`.execute(db);
  await sql`drop function if exists pkgreg_note_was_public()`.execute(db);
  await sql`alter table packages drop column if exists was_public`.execute(db);
  await sql`drop trigger if exists packages_list_change_private on packages`.execute(db);
}
