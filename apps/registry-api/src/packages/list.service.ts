import {
  filtersOf,
  type ListQuery,
  type ListResponse,
  type PackageFilters,
  type PackageListItem,
} from '@pkgreg/contracts';
import type { Db } from '@pkgreg/db';
import { toPackageListItem } from '@pkgreg/registry';
import { countFacets, facetOperands } from '../search/facets.repository.js';
import { filterKeys } from '../search/filters.js';
import { countSearchDocs } from '../search/search-statistics.repository.js';
import {
  countRanked,
  type ListRow,
  listFilteredByFacets,
  listFilteredByWalk,
  listPageByRank,
  type RankOrder,
} from './list.repository.js';

// GET /api/packages without the feed's parameters: a page of an order, all visible packages or those
// that pass the filters (docs/decisions.md, "Registry: discovery").

const ORDERS: Record<ListQuery['sort'], Record<ListQuery['order'], RankOrder>> = {
  name: {
    asc: { table: 'package_list_ranks', column: 'name_asc' },
    desc: { table: 'package_list_ranks', column: 'name_desc' },
  },
  stars: {
    asc: { table: 'package_list_ranks', column: 'stars_asc' },
    desc: { table: 'package_list_ranks', column: 'stars_desc' },
  },
  indexed: {
    asc: { table: 'package_list_ranks', column: 'indexed_asc' },
    desc: { table: 'package_list_ranks', column: 'indexed_desc' },
  },
  downloads: {
    asc: { table: 'package_popularity_ranks', column: 'downloads_asc' },
    desc: { table: 'package_popularity_ranks', column: 'downloads_desc' },
  },
  trending: {
    asc: { table: 'package_popularity_ranks', column: 'trending_asc' },
    desc: { table: 'package_popularity_ranks', column: 'trending_desc' },
  },
};

/** List positions are int4: a page starting past the last one holds nothing (and Postgres refuses the bound). */
const MAX_RANK = 2_147_483_647;

/**
 * A filtered page is read from the facet lists (a position probe per package that passes) when that
 * costs fewer rows than walking the order to the page's end (about (offset + pageSize) / share rows),
 * weighing a probe as this many walked rows.
 */
export const PROBE_COST = 2;

/** How filtered pages are read; tests force either way at small sizes. */
export interface ListOptions {
  /** `facets` or `walk` always; `cost` chooses by PROBE_COST. */
  filteredBy: 'cost' | 'facets' | 'walk';
}

export const DEFAULT_LIST_OPTIONS: ListOptions = { filteredBy: 'cost' };

export async function listPackages(
  db: Db,
  query: ListQuery,
  options: ListOptions = DEFAULT_LIST_OPTIONS,
): Promise<ListResponse> {
  const order = ORDERS[query.sort][query.order];
  const filters = filtersOf(query);
  const { rows, total } =
    filterKeys(filters).length === 0
      ? await unfilteredPage(db, order, query)
      : await filteredPage(db, order, filters, query, options);
  return { data: rows.map(toPackageListItem), total, page: query.page, pageSize: query.pageSize };
}

async function unfilteredPage(db: Db, order: RankOrder, query: ListQuery) {
  const from = (query.page - 1) * query.pageSize + 1;
  const to = Math.min(from + query.pageSize - 1, MAX_RANK);
  const [rows, total] = await Promise.all([
    from > MAX_RANK ? [] : listPageByRank(db, order, from, to),
    countRanked(db),
  ]);
  return { rows, total };
}

/**
 * `total` counts the packages that pass every filter from the facet lists (as of the last rebuild, as
 * the list positions are); a page past it reads nothing.
 */
async function filteredPage(
  db: Db,
  order: RankOrder,
  filters: PackageFilters,
  query: ListQuery,
  { filteredBy }: ListOptions,
) {
  const [facets, docs] = await Promise.all([facetOperands(db, filterKeys(filters)), countSearchDocs(db)]);
  const total = await countFacets(db, facets, docs);
  const offset = (query.page - 1) * query.pageSize;
  if (offset >= total) return { rows: [], total };
  const walked = ((offset + query.pageSize) * docs) / Math.max(total, 1);
  const byFacets = filteredBy === 'facets' || (filteredBy === 'cost' && PROBE_COST * total <= walked);
  const rows = byFacets
    ? await listFilteredByFacets(db, order, filters, facets, offset, query.pageSize)
    : await listFilteredByWalk(db, order, filters, offset, query.pageSize);
  return { rows, total };
}
