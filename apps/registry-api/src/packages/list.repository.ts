import type { PackageFilters } from '@pkgreg/contracts';
import type { Db } from '@pkgreg/db';
import type { ListItemRow } from '@pkgreg/registry';
import { sql } from 'kysely';
import { type FacetOperand, wholeFacetChain } from '../search/facets.repository.js';
import { filterPredicate } from '../search/filters.js';

/** A list order: the materialized view holding its dense positions, and the column. */
export interface RankOrder {
  table: 'package_list_ranks' | 'package_popularity_ranks';
  column:
    | 'name_asc'
    | 'name_desc'
    | 'stars_asc'
    | 'stars_desc'
    | 'indexed_asc'
    | 'indexed_desc'
    | 'downloads_asc'
    | 'downloads_desc'
    | 'trending_asc'
    | 'trending_desc';
}

const LIST_COLUMNS = sql`p.scope, p.name, p.description, p.kind, p.source_repo, p.repo_owner, p.repo_stars,
  p.license, p.last_indexed_at, p.risk, p.private`;

/** A list item's columns. */
export type ListRow = ListItemRow;

/** What anyone may see in a list: the rank tables hold public packages only, and the row is read live. */
const VISIBLE = sql`p.status <> 'delisted' and p.quarantined_at is null and not p.private`;

/**
 * One list page by dense position (see the list-ranks migration): `position between from and to` is an
 * index range, so page 50 000 costs what page 1 costs. A package delisted since the last refresh is
 * filtered here; its page is then one short until the refresh, but never overlaps the next page.
 */
export async function listPageByRank(db: Db, order: RankOrder, from: number, to: number): Promise<ListRow[]> {
  const rank = sql.ref(`r.${order.column}`);
  const result = await sql<ListRow>`
    select ${LIST_COLUMNS} from ${sql.table(order.table)} r join packages p on p.id = r.id
    where ${rank} between ${from} and ${to} and ${VISIBLE}
    order by ${rank}`.execute(db);
  return result.rows;
}

/**
 * A filtered page when the filters leave many packages: the order's positions walked from the first,
 * each package's live row tested, until the page is full. Page 1 reads about pageSize / share rows;
 * deeper pages read every row before them.
 */
export async function listFilteredByWalk(
  db: Db,
  order: RankOrder,
  filters: PackageFilters,
  offset: number,
  limit: number,
): Promise<ListRow[]> {
  const rank = sql.ref(`r.${order.column}`);
  // `offset 0` keeps the walk an index scan in order that the lateral probes row by row, so the limit
  // stops it; a join the planner could reorder might read every package first.
  const result = await sql<ListRow>`
    select p.* from (select r.id, ${rank} as rank from ${sql.table(order.table)} r order by ${rank} offset 0) r
    cross join lateral (select ${LIST_COLUMNS} from packages p
      where p.id = r.id and ${VISIBLE} and ${filterPredicate(filters)}) p
    order by r.rank
    offset ${offset} limit ${limit}`.execute(db);
  return result.rows;
}

/**
 * A filtered page when the filters leave few packages: their positions from the facets' whole lists (as
 * of the last rebuild), ordered by the order's positions, the page's rows read live (a package that
 * stopped passing since is left out: its page is one short until the next rebuild).
 */
export async function listFilteredByFacets(
  db: Db,
  order: RankOrder,
  filters: PackageFilters,
  facets: FacetOperand[],
  offset: number,
  limit: number,
): Promise<ListRow[]> {
  const rank = sql.ref(`r.${order.column}`);
  const kept = wholeFacetChain(facets, 'f');
  const result = await sql<ListRow>`
    with s as materialized (
      select o.ord from (select 1) one ${kept.joins} cross join lateral unnest(${kept.value}) o(ord)
    ), t as (
      select d.id, ${rank} as rank from s join package_search_docs d on d.ord = s.ord
      join ${sql.table(order.table)} r on r.id = d.id
      order by ${rank} offset ${offset} limit ${limit}
    )
    select ${LIST_COLUMNS} from t join packages p on p.id = t.id
    where ${VISIBLE} and ${filterPredicate(filters)}
    order by t.rank`.execute(db);
  return result.rows;
}

/** Visible packages as of the last rank refresh: the highest position is the count (an index probe). */
export async function countRanked(db: Db): Promise<number> {
  const row = await db
    .selectFrom('package_list_ranks')
    .select((eb) => eb.fn.max('name_asc').as('total'))
    .executeTakeFirst();
  return Number(row?.total ?? 0);
}
