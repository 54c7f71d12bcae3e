import type { Db, PackagesTable } from '@pkgreg/db';
import { type Selectable, sql } from 'kysely';

export type PackageRow = Omit<
  Selectable<PackagesTable>,
  'search_vector' | 'updated_at' | 'removed_at' | 'removal_reason' | 'deprecated_at'
>;

export type ListRankColumn =
  | 'name_asc'
  | 'name_desc'
  | 'stars_asc'
  | 'stars_desc'
  | 'indexed_asc'
  | 'indexed_desc';

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

const LIST_COLUMNS = [
  'p.scope',
  'p.name',
  'p.description',
  'p.kind',
  'p.source_repo',
  'p.repo_owner',
  'p.repo_stars',
  'p.license',
  'p.last_indexed_at',
  'p.risk',
] as const;

/** A package's detail columns and its latest version's findings (one index probe more, same statement). */
export type PackageDetailRow = PackageRow & { findings: Array<Record<string, unknown>> | null };

/** A visible (not delisted) package by scope and name, every detail column; undefined when absent. */
export async function findVisiblePackage(
  db: Db,
  scope: string,
  name: string,
): Promise<PackageDetailRow | undefined> {
  return db
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
    .where('scope', '=', scope)
    .where('name', '=', name)
    .where('status', '<>', 'delisted')
    .executeTakeFirst();
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
 * Current versions (`id.row_version`, what ETags come from) of the visible packages among `keys`, in
 * ONE query: the detail cache revalidates its expired entries with this instead of reloading them.
 */
export async function findVisibleVersions(
  db: Db,
  keys: Array<{ scope: string; name: string }>,
): Promise<Map<string, string>> {
  const result = await sql<{ scope: string; name: string; version: string }>`
    select p.scope, p.name, p.id || '.' || p.row_version as version
    from unnest(${keys.map((k) => k.scope)}::text[], ${keys.map((k) => k.name)}::text[]) as k(scope, name)
    join packages p on p.scope = k.scope and p.name = k.name and p.status <> 'delisted'`.execute(db);
  return new Map(result.rows.map((r) => [`${r.scope}/${r.name}`, r.version]));
}

export async function findVisiblePackageId(db: Db, scope: string, name: string): Promise<string | undefined> {
  const row = await db
    .selectFrom('packages')
    .select('id')
    .where('scope', '=', scope)
    .where('name', '=', name)
    .where('status', '<>', 'delisted')
    .executeTakeFirst();
  return row?.id;
}

/**
 * One list page by dense position (see the list-ranks migration): `ord between from and to` is an
 * index range, so page 50 000 costs what page 1 costs. A package delisted since the last refresh is
 * filtered here; its page is then one short until the refresh, but never overlaps the next page.
 */
export async function listPageByRank(db: Db, rank: ListRankColumn, from: number, to: number) {
  return db
    .selectFrom('package_list_ranks as r')
    .innerJoin('packages as p', 'p.id', 'r.id')
    .select(LIST_COLUMNS)
    .where(`r.${rank}`, '>=', from)
    .where(`r.${rank}`, '<=', to)
    .where('p.status', '<>', 'delisted')
    .where('p.quarantined_at', 'is', null)
    .orderBy(`r.${rank}`)
    .execute();
}

/** Visible packages as of the last rank refresh: the highest position is the count (an index probe). */
export async function countRanked(db: Db): Promise<number> {
  const row = await db
    .selectFrom('package_list_ranks')
    .select((eb) => eb.fn.max('name_asc').as('total'))
    .executeTakeFirst();
  return Number(row?.total ?? 0);
}

/** Rebuilds the positions; CONCURRENTLY so list readers never wait on it. */
export async function refreshListRanks(db: Db): Promise<void> {
  await sql`refresh materialized view concurrently package_list_ranks`.execute(db);
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

/** An operator removal: delisted, and every version 410 with the reason. False when there is no such package. */
export async function removePackage(
  db: Db,
  key: { scope: string; name: string },
  reason: string,
): Promise<boolean> {
  const result = await db
    .updateTable('packages')
    .set({ removed_at: sql`now()`, removal_reason: reason, status: 'delisted' })
    .where('scope', '=', key.scope)
    .where('name', '=', key.name)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** Lifts a removal (the package stays delisted until its source is indexed again). */
export async function restorePackage(db: Db, key: { scope: string; name: string }): Promise<boolean> {
  const result = await db
    .updateTable('packages')
    .set({ removed_at: null, removal_reason: null })
    .where('scope', '=', key.scope)
    .where('name', '=', key.name)
    .where('removed_at', 'is not', null)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}
