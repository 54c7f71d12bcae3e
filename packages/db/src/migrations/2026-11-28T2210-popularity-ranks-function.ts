import { type Kysely, sql } from 'kysely';

// Frozen in time: never import app code here, never edit after it has shipped. Add a new file instead.

// The popularity positions' rebuild becomes one SQL function, the only copy of its query: registry-api
// calls it (`select pkgreg_refresh_popularity_ranks(counter, day)`), where it used to hold its own copy
// beside 2026-11-25T1700 and 2026-11-25T1710 (which stay as they shipped).
//
// It builds package_popularity_ranks_next aside with its key and indexes, then drops the old table and
// renames the new one in: readers of the old table wait only for that swap at the end of the caller's
// transaction. It stores the inputs the positions were built from (the download-fold counter and UTC
// day the caller read before calling) in package_derived_state in the same transaction. Downloads: all-time
// unique downloaders; trending: the last 7 UTC days' unique downloaders, today weighted 7, the day
// before 6, ... six days ago 1 (docs/decisions.md); ties by scope then name, like the other orders.
export async function up(db: Kysely<any>): Promise<void> {
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
      where p.status <> 'delisted' and p.quarantined_at is null;
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
  await sql`drop function if exists pkgreg_refresh_popularity_ranks(bigint, date)`.execute(db);
}
