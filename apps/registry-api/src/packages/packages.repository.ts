import type { Db, PackagesTable } from '@pkgreg/db';
import { PUBLIC_ONLY, type ReadAccess, readableBy } from '@pkgreg/registry';
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
  | 'visibility'
  | 'was_public'
>;

const DETAIL_COLUMNS = [
  'id',
  'visibility',
  'private',
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
  'private',
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

/**
 * A visible (not delisted) package by scope and name that `access` may read, every detail column;
 * undefined when absent or private to the reader (the same query either way: a private package costs an
 * outsider what a missing one does).
 */
export async function findVisiblePackage(
  db: Db,
  scope: string,
  name: string,
  access: ReadAccess = PUBLIC_ONLY,
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
      .where(readableBy(access))
      .executeTakeFirst()
  );
}

/** Only what the source redirect needs, when `access` may read the package. */
export async function findVisibleSource(
  db: Db,
  scope: string,
  name: string,
  access: ReadAccess,
): Promise<
  | Pick<
      PackageRow,
      'scope' | 'name' | 'private' | 'source_repo' | 'source_path' | 'source_ref' | 'hosted' | 'version'
    >
  | undefined
> {
  return db
    .selectFrom('packages')
    .select(['scope', 'name', 'private', 'source_repo', 'source_path', 'source_ref', 'hosted', 'version'])
    .where('scope', '=', scope)
    .where('name', '=', name)
    .where('status', '<>', 'delisted')
    .where(readableBy(access))
    .executeTakeFirst();
}

/**
 * Current versions (`id.row_version.day`, what ETags come from) of the visible public packages among
 * `keys`, in ONE query: the detail cache (public packages only) revalidates its expired entries with this
 * instead of reloading them; one that turned private is dropped like a delisted one.
 */
export async function findVisibleVersions(
  db: Db,
  keys: Array<{ scope: string; name: string }>,
): Promise<Map<string, string>> {
  const result = await sql<{ scope: string; name: string; version: string }>`
    select p.scope, p.name, p.id || '.' || p.row_version || '.' || ${EPOCH_DAY} as version
    from unnest(${keys.map((k) => k.scope)}::text[], ${keys.map((k) => k.name)}::text[]) as k(scope, name)
    join packages p on p.scope = k.scope and p.name = k.name and p.status <> 'delisted' and not p.private`.execute(
    db,
  );
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

/**
 * Rebuilds the positions by downloads and trending score aside and swaps them in, with the inputs they
 * were built from (read before the rebuild: a fold racing it leaves the state behind). The SQL is the
 * database's pkgreg_refresh_popularity_ranks (migration 2026-11-28T2210-popularity-ranks-function):
 * readers keep the old table until the swap (a concurrent refresh of a materialized view diffed every
 * row: 2026-11-25T1710-popularity-ranks-table says why it went).
 */
export async function refreshPopularityRanks(db: Db, inputs: PopularityState): Promise<void> {
  await sql`select pkgreg_refresh_popularity_ranks(${inputs.counter}, ${inputs.day}::date)`.execute(db);
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
export async function readCatalogMark(db: Db, { privateToo }: { privateToo: boolean }): Promise<string> {
  // Only this database's transactions can change packages; other databases of the cluster (other
  // tenants, test databases) would only move the mark for nothing. A standby runs none of the writers,
  // so there every running transaction counts. A public-only reader's mark leaves private rows out, so
  // their changes cannot be watched through it; a package turning private moves it through the derived
  // state's change counter (trigger packages_list_change_private).
  const result = await sql<{ mark: string }>`
    with last as (select max(updated_xid) as xid from packages ${privateToo ? sql`` : sql`where not private`}),
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
