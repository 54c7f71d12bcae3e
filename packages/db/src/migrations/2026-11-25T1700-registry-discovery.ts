import { type Kysely, sql } from 'kysely';

// Frozen in time: never import app code here, never edit after it has shipped. Add a new file instead.

// Discovery (issue 20): filters, popularity sorts, downloads per day and the sync feed.
//
// Sync feed. `updated_at` moved on every update, the download fold's included, which made it useless
// for "what changed". Now the row trigger leaves `updated_at` (and the new `updated_xid`) alone on an
// update that changes download_count: only the fold writes that column. `updated_xid` is the id of the
// transaction that last changed the package: the feed walks (updated_xid, id) and serves only rows
// below the oldest transaction still running (pg_snapshot_xmin), so a transaction that commits late
// can never land behind a cursor already handed out. Existing rows start at xid 0 (a constant default:
// no table rewrite); new rows and updates take pg_current_xact_id(). A yank or unyank touches its
// package (the feed follows versions too).
//
// Downloads per day: package_downloads_daily, one row per package and UTC day, added to by the same
// fold that adds to download_count (registry-api's flusher), so both move in one transaction. No
// foreign key, like package_download_batches (the fold joins packages). `package_download_changes` is
// bumped by each fold that folded something, so the popularity refresher knows when to run.
//
// Popularity sorts: package_popularity_ranks, a materialized view of every visible package's dense
// position by all-time downloads and by trending score (the last 7 UTC days, today weighted 7, the day
// before 6, ... six days ago 1), asc and desc, ties by scope then name like the other list orders.
// registry-api refreshes it CONCURRENTLY on its own interval and with the list positions.
//
// Filters: pkgreg_facet_keys() gives a package's filter keys (`kind:skill`, `tag:pdf`, `risk:low` for
// every risk at least its own, `owner:acme`, ...), lowercased; registry-api's rebuild stores each key's
// ranking positions by block in package_search_facets and their counts in package_search_facet_stats.
// Both start empty, and this migration marks the derived tables stale so the next refresh fills them.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table packages add column updated_xid xid8 not null default '0'`.execute(db);
  await sql`alter table packages alter column updated_xid set default pg_current_xact_id()`.execute(db);
  await sql`
    create or replace function pkgreg_bump_row_version() returns trigger language plpgsql as $$
    begin
      new.row_version := old.row_version + 1;
      -- The download fold is the only writer of download_count, and a fold is no change of the package.
      if new.download_count is not distinct from old.download_count then
        new.updated_at := now();
        new.updated_xid := pg_current_xact_id();
      end if;
      return new;
    end $$`.execute(db);
  await sql`create index packages_feed_idx on packages (updated_xid, id)`.execute(db);
  await sql`create index packages_updated_at_idx on packages (updated_at)`.execute(db);

  await sql`
    create function pkgreg_touch_package_of_version() returns trigger language plpgsql as $$
    begin
      update packages set updated_at = now()
      where id = (select v.package_id from package_versions v
        where v.id = case when tg_op = 'DELETE' then old.version_id else new.version_id end);
      return null;
    end $$`.execute(db);
  await sql`
    create trigger package_version_yanks_touch after insert or update or delete on package_version_yanks
    for each row execute function pkgreg_touch_package_of_version()`.execute(db);

  await sql`
    create table package_downloads_daily (
      package_id uuid not null,
      day date not null,
      count bigint not null,
      primary key (package_id, day)
    ) with (fillfactor = 80)`.execute(db);
  await sql`create index package_downloads_daily_day_idx on package_downloads_daily (day)`.execute(db);
  await sql`create sequence package_download_changes`.execute(db);

  await sql`
    create materialized view package_popularity_ranks as
    with today as (select (now() at time zone 'UTC')::date as day),
    trending as (
      select d.package_id, sum(d.count * (7 - (t.day - d.day)))::bigint as score
      from package_downloads_daily d, today t
      where d.day > t.day - 7 and d.day <= t.day
      group by d.package_id
    )
    select p.id,
      (row_number() over (order by p.download_count, p.scope, p.name))::int as downloads_asc,
      (row_number() over (order by p.download_count desc, p.scope, p.name))::int as downloads_desc,
      (row_number() over (order by coalesce(tr.score, 0), p.scope, p.name))::int as trending_asc,
      (row_number() over (order by coalesce(tr.score, 0) desc, p.scope, p.name))::int as trending_desc
    from packages p left join trending tr on tr.package_id = p.id
    where p.status <> 'delisted' and p.quarantined_at is null`.execute(db);
  await sql`create unique index package_popularity_ranks_id_key on package_popularity_ranks (id)`.execute(db);
  for (const column of ['downloads_asc', 'downloads_desc', 'trending_asc', 'trending_desc']) {
    await sql`create unique index ${sql.id(`package_popularity_ranks_${column}_key`)}
      on package_popularity_ranks (${sql.id(column)})`.execute(db);
  }
  await sql`
    alter table package_derived_state
      add column popularity_counter bigint,
      add column popularity_day date`.execute(db);

  await sql`
    create function pkgreg_facet_keys(kind text, category text, tags text[], compatibility text[],
      license text, verified boolean, status text, risk text, scope text) returns text[]
    language sql immutable parallel safe as $$
      select array(select distinct f.k from (
        select 'kind:' || kind
        union all select 'category:' || lower(btrim(category)) where btrim(category) <> ''
        union all select 'tag:' || lower(btrim(t)) from unnest(tags) t where btrim(t) <> ''
        union all select 'agent:' || lower(btrim(a)) from unnest(compatibility) a where btrim(a) <> ''
        union all select 'license:' || lower(btrim(license)) where btrim(license) <> ''
        union all select 'verified:' || verified::text
        union all select 'status:' || status
        union all select 'risk:' || r.level
          from unnest(array['none', 'low', 'medium', 'high']) with ordinality r(level, i)
          where r.i >= array_position(array['none', 'low', 'medium', 'high'], risk)
        union all select 'owner:' || scope
      ) f(k) where f.k is not null order by f.k)
    $$`.execute(db);
  await sql`
    create table package_search_facets (
      key text not null,
      block int4 not null,
      ords int4[] not null,
      primary key (key, block))`.execute(db);
  await sql`
    create table package_search_facet_stats (
      key text primary key,
      docs int4 not null,
      stored text not null)`.execute(db);
  await sql`update package_derived_state set change_counter = -1`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table if exists package_search_facet_stats`.execute(db);
  await sql`drop table if exists package_search_facets`.execute(db);
  await sql`drop function if exists pkgreg_facet_keys(text, text, text[], text[], text, boolean, text, text, text)`.execute(
    db,
  );
  await sql`alter table package_derived_state drop column popularity_counter, drop column popularity_day`.execute(
    db,
  );
  await sql`drop materialized view if exists package_popularity_ranks`.execute(db);
  await sql`drop sequence if exists package_download_changes`.execute(db);
  await sql`drop table if exists package_downloads_daily`.execute(db);
  await sql`drop trigger if exists package_version_yanks_touch on package_version_yanks`.execute(db);
  await sql`drop function if exists pkgreg_touch_package_of_version()`.execute(db);
  await sql`drop index if exists packages_updated_at_idx`.execute(db);
  await sql`drop index if exists packages_feed_idx`.execute(db);
  await sql`
    create or replace function pkgreg_bump_row_version() returns trigger language plpgsql as $$
    begin
      new.row_version := old.row_version + 1;
      new.updated_at := now();
      return new;
    end $$`.execute(db);
  await sql`alter table packages drop column updated_xid`.execute(db);
}
