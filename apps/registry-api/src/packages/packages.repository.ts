import type { Db, PackagesTable } from '@pkgreg/db';
import { type Selectable, sql } from 'kysely';

export type PackageRow = Omit<
  Selectable<PackagesTable>,
  | 'search_vector'
  | 'updated_at'
  | 'updated_xid'
  | 'removed_at'
  | 'removal_reason'
  | 'deprecated_at'
  | 'unique_download_count'
>;

const DETAIL_COLUMNS = [
  'id',
  'scope',
  'name',
  'description',
  'kind',
  'category',
  'tags',
  'compatibility',
  'language',
  'version',
  'source_repo',
  'source_path',
  'source_ref',
  'repo_url',
  'homepage_url',
  'repo_owner',
  'author',
  'repo_stars',
  'license',
  'skill_md_raw',
  'frontmatter',
  'allowed_tools',
  'token_count',
  'file_count',
  'progressive_disclosure',
  'download_count',
  'dep_count',
  'dependant_count',
  'verified',
  'featured',
  'status',
  'hosted',
  'first_indexed_at',
  'last_indexed_at',
  'last_commit_sha',
  'warnings',
  'risk',
  'quarantined_at',
  'quarantine_reason',
  'deprecation_message',
  'row_version',
] as const;

/** A package's detail columns and its latest version's findings (one index probe more, same statement). */
export type PackageDetailRow = PackageRow & {
  findings: Array<Record<string, unknown>> | null;
  /** Downloads of the last 30 UTC days with any: [days after `daily_from`, count]; null when none. */
  daily_downloads: Array<[number, number]> | null;
  /** The first of those days (YYYY-MM-DD). */
  daily_from: string;
  /** Today (UTC) in days since 1970-01-01: the recent downloads move with it, so the ETag does. */
  epoch_day: number;
};

/** Today's UTC day. */
const TODAY = sql`(now() at time zone 'UTC')::date`;
/** Today's UTC day as days since 1970-01-01. */
const EPOCH_DAY = sql<number>`(${TODAY} - date '1970-01-01')`;

/** A visible (not delisted) package by scope and name, every detail column; undefined when absent. */
export async function findVisiblePackage(
  db: Db,
  scope: string,
  name: string,
): Promise<PackageDetailRow | undefined> {
  return (
    db
      .selectFrom('packages')
      .select(DETAIL_COLUMNS)
      .select((eb) =>
        eb
          .selectFrom('package_versions as v')
          .select('v.findings')
          .whereRef('v.package_id', '=', 'packages.id')
          .orderBy('v.seq', 'desc')
          .limit(1)
          .as('findings'),
      )
      // One index range of package_downloads_daily (at most 30 rows): [day index, count] pairs, the
      // days without downloads left for the service to fill with 0.
      .select(
        sql<Array<
          [number, number]
        > | null>`(select json_agg(json_build_array(d.day - (${TODAY} - 29), d.count))
          from package_downloads_daily d
          where d.package_id = packages.id and d.day > ${TODAY} - 30 and d.day <= ${TODAY})`.as(
          'daily_downloads',
        ),
      )
      .select(sql<string>`to_char(${TODAY} - 29, 'YYYY-MM-DD')`.as('daily_from'))
      .select(EPOCH_DAY.as('epoch_day'))
      .where('scope', '=', scope)
      .where('name', '=', name)
      .where('status', '<>', 'delisted')
      .executeTakeFirst()
  );
}

/** Only what the source redirect needs. */
export async function findVisibleSource(
  db: Db,
  scope: string,
  name: string,
): Promise<Pick<PackageRow, 'source_repo' | 'source_path' | 'source_ref'> | undefined> {
  return db
    .selectFrom('packages')
    .select(['source_repo', 'source_path', 'source_ref'])
    .where('scope', '=', scope)
    .where('name', '=', name)
    .where('status', '<>', 'delisted')
    .executeTakeFirst();
}

/**
 * Current versions (`id.row_version.day`, what ETags come from) of the visible packages among `keys`, in
 * ONE query: the detail cache revalidates its expired entries with this instead of reloading them.
 */
export async function findVisibleVersions(
  db: Db,
  keys: Array<{ scope: string; name: string }>,
): Promise<Map<string, string>> {
  const result = await sql<{ scope: string; name: string; version: string }>`
    select p.scope, p.name, p.id || '.' || p.row_version || '.' || ${EPOCH_DAY} as version
    from unnest(${keys.map((k) => k.scope)}::text[], ${keys.map((k) => k.name)}::text[]) as k(scope, name)
    join packages p on p.scope = k.scope and p.name = k.name and p.status <> 'delisted'`.execute(db);
  return new Map(result.rows.map((r) => [`${r.scope}/${r.name}`, r.version]));
}

/** Rebuilds the positions; CONCURRENTLY so list readers never wait on it. */
export async function refreshListRanks(db: Db): Promise<void> {
  await sql`refresh materialized view concurrently package_list_ranks`.execute(db);
}

/** What the popularity positions were built from: the fold counter and the UTC day (trending's today). */
export interface PopularityState {
  counter: number;
  day: string;
}

/** The download-fold counter now, and today's UTC day, as the database sees them. */
export async function readPopularityInputs(db: Db): Promise<PopularityState> {
  const result = await sql<{ last_value: number; is_called: boolean; day: string }>`
    select last_value, is_called, to_char((now() at time zone 'UTC')::date, 'YYYY-MM-DD') as day
    from package_download_changes`.execute(db);
  const row = result.rows[0];
  return { counter: row?.is_called ? Number(row.last_value) : 0, day: row?.day ?? '' };
}

/** What the popularity positions were last refreshed from (undefined before the first refresh). */
export async function readPopularityState(db: Db): Promise<PopularityState | undefined> {
  const row = await db
    .selectFrom('package_derived_state')
    .select(['popularity_counter', sql<string | null>`to_char(popularity_day, 'YYYY-MM-DD')`.as('day')])
    .executeTakeFirst();
  if (row?.popularity_counter === null || row?.popularity_counter === undefined || !row.day) return undefined;
  return { counter: Number(row.popularity_counter), day: row.day };
}

const POPULARITY_ORDERS = ['downloads_asc', 'downloads_desc', 'trending_asc', 'trending_desc'];

/**
 * Rebuilds the positions by downloads and trending score aside (package_popularity_ranks_next) and swaps
 * them in: readers keep the old table until the swap, whose lock covers only the drop and renames. A
 * concurrent refresh of a materialized view diffed every row (70 s at 1M packages, against 7 s). Stores
 * the inputs they were built from, read before the rebuild (a fold racing it leaves the state behind).
 * Downloads: all-time unique downloaders (each day's summed); trending: the last 7 UTC days' unique
 * downloaders, today weighted 7, the day before 6, ... six days ago 1 (docs/decisions.md).
 */
export async function refreshPopularityRanks(db: Db, inputs: PopularityState): Promise<void> {
  await sql`drop table if exists package_popularity_ranks_next`.execute(db);
  await sql`
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
    where p.status <> 'delisted' and p.quarantined_at is null`.execute(db);
  await sql`alter table package_popularity_ranks_next
    add constraint package_popularity_ranks_next_pkey primary key (id)`.execute(db);
  for (const column of POPULARITY_ORDERS) {
    await sql`create unique index ${sql.id(`package_popularity_ranks_next_${column}_key`)}
      on package_popularity_ranks_next (${sql.id(column)})`.execute(db);
  }
  // Statistics for the planner: without them a page by these orders was planned as a scan (8 ms at 1M
  // packages instead of 0.6), and autovacuum may be off.
  await sql`analyze package_popularity_ranks_next`.execute(db);
  await db.transaction().execute(async (trx) => {
    await sql`drop table package_popularity_ranks`.execute(trx);
    await sql`alter table package_popularity_ranks_next rename to package_popularity_ranks`.execute(trx);
    await sql`alter index package_popularity_ranks_next_pkey rename to package_popularity_ranks_pkey`.execute(
      trx,
    );
    for (const column of POPULARITY_ORDERS) {
      await sql`alter index ${sql.id(`package_popularity_ranks_next_${column}_key`)}
        rename to ${sql.id(`package_popularity_ranks_${column}_key`)}`.execute(trx);
    }
    const values = { popularity_counter: inputs.counter, popularity_day: inputs.day };
    await trx
      .insertInto('package_derived_state')
      .values({ id: true, change_counter: -1, ...values })
      .onConflict((oc) => oc.column('id').doUpdateSet(values))
      .execute();
  });
}

/** The change counter the list-ranks trigger bumps (non-transactional, so it never blocks writers). */
export async function readListChangeCounter(db: Db): Promise<number> {
  const result = await sql<{ last_value: number; is_called: boolean }>`
    select last_value, is_called from package_list_changes`.execute(db);
  const row = result.rows[0];
  return row?.is_called ? Number(row.last_value) : 0;
}

/** The change counter value the derived tables were last rebuilt at (undefined before the first). */
export async function readDerivedCounter(db: Db): Promise<number | undefined> {
  const row = await db.selectFrom('package_derived_state').select('change_counter').executeTakeFirst();
  return row ? Number(row.change_counter) : undefined;
}

export async function writeDerivedCounter(db: Db, counter: number): Promise<void> {
  await db
    .insertInto('package_derived_state')
    .values({ id: true, change_counter: counter })
    .onConflict((oc) => oc.column('id').doUpdateSet({ change_counter: counter, refreshed_at: sql`now()` }))
    .execute();
}

/**
 * The catalog's change mark: everything list, search, the feed and dependants are read from, as one
 * string that moves when any of it may have changed (src/packages/catalog-validator.ts says why each
 * part). Two index probes and one row; it reads no package.
 */
export async function readCatalogMark(db: Db): Promise<string> {
  // Only this database's transactions can change packages; other databases of the cluster (other
  // tenants, test databases) would only move the mark for nothing. A standby runs none of the writers,
  // so there every running transaction counts.
  const result = await sql<{ mark: string }>`
    with last as (select max(updated_xid) as xid from packages),
    snapshot as (select pg_current_snapshot() as s),
    here as (select backend_xid as x from pg_stat_activity
      where datname = current_database() and backend_xid is not null)
    select concat_ws('|', last.xid::text,
      (select string_agg(x::text, ',' order by x) from pg_snapshot_xip(snapshot.s) x
        where x < last.xid and (pg_is_in_recovery() or x::xid in (select x from here))),
      d.change_counter, d.refreshed_at, d.popularity_counter, d.popularity_day) as mark
    from last cross join snapshot left join package_derived_state d on true`.execute(db);
  return result.rows[0]?.mark ?? '';
}
