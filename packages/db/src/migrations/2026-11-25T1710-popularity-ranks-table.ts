import { type Kysely, sql } from 'kysely';

// Frozen in time: never import app code here, never edit after it has shipped. Add a new file instead.

// package_popularity_ranks (2026-11-25T1700-registry-discovery) becomes a table rebuilt aside and swapped
// in, like the search tables: REFRESH MATERIALIZED VIEW CONCURRENTLY diffs every row against the old
// result, and when downloads move most dense positions move with them. At 1M packages the concurrent
// refresh took 70 s; building the table aside and its five indexes takes 7 s. Same columns and indexes;
// filled here once, then by registry-api's popularity refresher.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`drop materialized view if exists package_popularity_ranks`.execute(db);
  await sql`
    create table package_popularity_ranks as
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
  await sql`alter table package_popularity_ranks add constraint package_popularity_ranks_pkey primary key (id)`.execute(
    db,
  );
  for (const column of ['downloads_asc', 'downloads_desc', 'trending_asc', 'trending_desc']) {
    await sql`create unique index ${sql.id(`package_popularity_ranks_${column}_key`)}
      on package_popularity_ranks (${sql.id(column)})`.execute(db);
  }
  await sql`analyze package_popularity_ranks`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table if exists package_popularity_ranks`.execute(db);
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
}
