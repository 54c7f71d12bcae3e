import {
  filtersOf,
  type ListQuery,
  type ListResponse,
  type PackageFilters,
} from '@pkgreg/contracts';
import type { Db } from '@pkgreg/db';
import { isPublicOnly, PUBLIC_ONLY, type ReadAccess, toPackageListItem } from '@pkgreg/registry';
import { countFacets, type FacetOperand, facetOperands } from '../search/facets.repository.js';
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
import { countFilteredUpTo, countPublicBefore, listPrivateRows } from './private-list.repository.js';

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

/**
 * A page of the list as `access` sees it: public packages only (the rank tables' own) for anyone, and
 * for a reader with private access its private packages merged in (mergedPage).
 */
export async function listPackages(
  db: Db,
  query: ListQuery,
  options: ListOptions = DEFAULT_LIST_OPTIONS,
  access: ReadAccess = PUBLIC_ONLY,
): Promise<ListResponse> {
  const order = ORDERS[query.sort][query.order];
  const filters = filtersOf(query);
  const { rows, total } = !isPublicOnly(access)
    ? await mergedPage(db, order, filters, query, options, access)
    : filterKeys(filters).length === 0
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
  const rows = await filteredRows(db, order, filters, { facets, docs, total }, offset, query.pageSize, {
    filteredBy,
  });
  return { rows, total };
}

/** What a filtered page is read with: the filters' facet operands, the ranked packages, those passing. */
interface FilteredCounts {
  facets: FacetOperand[];
  docs: number;
  total: number;
}

/** `limit` public packages passing the filters from the `offset`-th, by the cheaper of the two reads. */
async function filteredRows(
  db: Db,
  order: RankOrder,
  filters: PackageFilters,
  { facets, docs, total }: FilteredCounts,
  offset: number,
  limit: number,
  { filteredBy }: ListOptions,
): Promise<ListRow[]> {
  const walked = ((offset + limit) * docs) / Math.max(total, 1);
  const byFacets = filteredBy === 'facets' || (filteredBy === 'cost' && PROBE_COST * total <= walked);
  return byFacets
    ? listFilteredByFacets(db, order, filters, facets, offset, limit)
    : listFilteredByWalk(db, order, filters, offset, limit);
}

/**
 * A page for a reader with private access (docs/search.md, "Private packages"): the public order (the
 * rank tables, public only) with the reader's private packages merged in. Private package i (in the
 * order) has `before[i]` public packages before it (countPublicBefore; among those passing the filters
 * when filtered, countFilteredUpTo), so its place in the merged order is before[i] + i, and a page's
 * offset splits exactly into the private packages before it (j) and the public ones (offset - j): the
 * public page is then read at its own offset by the plans above, and the two merged. `total` adds the
 * reader's private packages to the public count.
 */
async function mergedPage(
  db: Db,
  order: RankOrder,
  filters: PackageFilters,
  query: ListQuery,
  options: ListOptions,
  access: ReadAccess,
): Promise<{ rows: ListRow[]; total: number }> {
  const filtered = filterKeys(filters).length > 0;
  const [privates, counts] = await Promise.all([
    listPrivateRows(db, access, order, filters),
    filtered
      ? filteredCounts(db, filters)
      : countRanked(db).then((total) => ({ facets: [], docs: total, total })),
  ]);
  const publicTotal = counts.total;
  const found = await countPublicBefore(
    db,
    order,
    privates.map((p) => p.id),
  );
  // Keys are read live and positions as of the last refresh: keep the places in order whatever happened.
  let before: number[] = [];
  for (const p of privates) before.push(Math.max(found.get(p.id) ?? 0, before.at(-1) ?? 0));
  if (filtered) before = await countFilteredUpTo(db, order, counts.facets, before);
  before = before.map((b) => Math.min(b, publicTotal));

  const offset = (query.page - 1) * query.pageSize;
  const size = query.pageSize;
  let first = 0;
  while (first < before.length && (before[first] ?? 0) + first < offset) first += 1;
  let end = first;
  while (end < before.length && (before[end] ?? 0) + end < offset + size) end += 1;
  const publicOffset = offset - first;
  const publicCount = Math.max(0, Math.min(size - (end - first), publicTotal - publicOffset));
  let publicRows: ListRow[] = [];
  if (publicCount > 0 && publicOffset + 1 <= MAX_RANK) {
    publicRows = filtered
      ? await filteredRows(db, order, filters, counts, publicOffset, publicCount, options)
      : await listPageByRank(db, order, publicOffset + 1, Math.min(publicOffset + publicCount, MAX_RANK));
  }
  // Private package i goes before the public package at index before[i] (0-based, in the public order).
  const rows: ListRow[] = [];
  let i = first;
  publicRows.forEach((row, t) => {
    while (i < end && (before[i] ?? 0) <= publicOffset + t) rows.push(privates[i++] as ListRow);
    rows.push(row);
  });
  while (i < end) rows.push(privates[i++] as ListRow);
  return { rows, total: publicTotal + privates.length };
}

async function filteredCounts(db: Db, filters: PackageFilters): Promise<FilteredCounts> {
  const [facets, docs] = await Promise.all([facetOperands(db, filterKeys(filters)), countSearchDocs(db)]);
  return { facets, docs, total: await countFacets(db, facets, docs) };
}
