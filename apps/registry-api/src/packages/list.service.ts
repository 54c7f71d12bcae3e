import { filtersOf, type ListQuery, type ListResponse, type PackageFilters } from '@pkgreg/contracts';
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
import {
  countFilteredUpTo,
  countPrecedingInRange,
  countPrivateRows,
  countPublicBefore,
  listPrivateRows,
  type PrivateListRow,
} from './private-list.repository.js';

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
  /** Unfiltered pages of a reader with private access ending this far in are placed by placeShallow. */
  shallowPlaces: number;
}

export const DEFAULT_LIST_OPTIONS: ListOptions = { filteredBy: 'cost', shallowPlaces: 100 };

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
  options: ListOptions,
) {
  const [facets, docs] = await Promise.all([facetOperands(db, filterKeys(filters)), countSearchDocs(db)]);
  const total = await countFacets(db, facets, docs);
  const offset = (query.page - 1) * query.pageSize;
  if (offset >= total) return { rows: [], total };
  const rows = await filteredRows(
    db,
    order,
    filters,
    { facets, docs, total },
    offset,
    query.pageSize,
    options,
  );
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
 * order) has `before[i]` public packages before it, so its place in the merged order is before[i] + i,
 * which grows with i: the page's offset splits exactly into the private packages before it (`first`)
 * and the public ones (offset - first). The public page is then read at its own offset by the plans
 * above, and the two merged. `total` adds the reader's private packages to the public count.
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
  const offset = (query.page - 1) * query.pageSize;
  const size = query.pageSize;
  // A page this near the top holds none of the private packages past its end: only those are read.
  const shallow = !filtered && offset + size <= options.shallowPlaces;
  const [privates, privateTotal, counts] = await Promise.all([
    listPrivateRows(db, access, order, filters, shallow ? offset + size : undefined),
    shallow ? countPrivateRows(db, access) : undefined,
    filtered
      ? filteredCounts(db, filters)
      : countRanked(db).then((total) => ({ facets: [], docs: total, total })),
  ]);
  const publicTotal = counts.total;
  const { first, before } = filtered
    ? await placeAll(db, order, privates, counts.facets, publicTotal, offset, size)
    : shallow
      ? await placeShallow(db, order, privates, publicTotal, offset, size)
      : await placeAround(db, order, privates, publicTotal, offset, size);
  // `before` holds the places of privates[first], privates[first + 1], ...: those on the page lead.
  let onPage = 0;
  while (onPage < before.length && (before[onPage] ?? 0) + first + onPage < offset + size) onPage += 1;
  const publicOffset = offset - first;
  const publicCount = Math.max(0, Math.min(size - onPage, publicTotal - publicOffset));
  let publicRows: ListRow[] = [];
  if (publicCount > 0 && publicOffset + 1 <= MAX_RANK) {
    publicRows = filtered
      ? await filteredRows(db, order, filters, counts, publicOffset, publicCount, options)
      : await listPageByRank(db, order, publicOffset + 1, Math.min(publicOffset + publicCount, MAX_RANK));
  }
  // Private package first + k goes before the public package at index before[k] (0-based).
  const rows: ListRow[] = [];
  let k = 0;
  publicRows.forEach((row, t) => {
    while (k < onPage && (before[k] ?? 0) <= publicOffset + t) rows.push(privates[first + k++] as ListRow);
    rows.push(row);
  });
  while (k < onPage) rows.push(privates[first + k++] as ListRow);
  return { rows, total: publicTotal + (privateTotal ?? privates.length) };
}

/** Probes per round of placeAround's search. */
const SEARCH_FANOUT = 15;

/** Where the private packages around a page go: the index of the first not before it, and places from it. */
interface Placement {
  first: number;
  /** before[k]: public packages before privates[first + k], for up to a page of them. */
  before: number[];
}

/** The first private package not before the page at `offset` (place + index), and the page's places. */
function placementFrom(places: number[], offset: number, size: number): Placement {
  let first = 0;
  while (first < places.length && (places[first] ?? 0) + first < offset) first += 1;
  return { first, before: places.slice(first, first + size) };
}

/** Places made non-decreasing (keys are read live, positions as of the last refresh) and at most `max`. */
function ordered(places: number[], max: number, floor = 0): number[] {
  const out: number[] = [];
  for (const p of places) out.push(Math.min(max, Math.max(p, out.at(-1) ?? floor)));
  return out;
}

/**
 * Unfiltered: a search over the private packages for the first one not before the page (each round one
 * statement placing SEARCH_FANOUT packages, each about log2 of the public ones in index probes), then
 * the page's candidates placed at once against the public page they fall in (countPrecedingInRange). A
 * member of a large organisation costs a few statements more, not one placement per private package.
 */
async function placeAround(
  db: Db,
  order: RankOrder,
  privates: PrivateListRow[],
  publicTotal: number,
  offset: number,
  size: number,
): Promise<Placement> {
  // A search with SEARCH_FANOUT probes a round, each round one statement: a round trip costs more than
  // the probes of one, so a member of a 10,000-package organisation costs 3-4 statements, not 14.
  const placeOf = new Map<number, number>();
  let lo = 0;
  let hi = privates.length;
  while (lo < hi) {
    const step = Math.max(1, Math.ceil((hi - lo) / (SEARCH_FANOUT + 1)));
    const probes: number[] = [];
    for (let i = lo + step - 1; i < hi && probes.length < SEARCH_FANOUT; i += step) probes.push(i);
    const ids = probes.map((i) => (privates[i] as PrivateListRow).id);
    // Places grow with the index: the places known either side of this round's range bound its probes.
    const below = lo > 0 ? (placeOf.get(lo - 1) ?? 0) : 0;
    const above = placeOf.get(hi);
    const found = await countPublicBefore(
      db,
      order,
      ids,
      ids.map(() => [below, above ?? publicTotal]),
    );
    for (const [k, i] of probes.entries()) {
      placeOf.set(i, Math.min(found.get(ids[k] as string) ?? 0, publicTotal));
    }
    // The first probe not before the page bounds the answer from above; the one before it from below.
    const at = probes.findIndex((i) => (placeOf.get(i) ?? 0) + i >= offset);
    if (at < 0) lo = (probes.at(-1) ?? lo) + 1;
    else {
      hi = probes[at] as number;
      if (at > 0) lo = (probes[at - 1] as number) + 1;
    }
  }
  const first = lo;
  const candidates = privates.slice(first, first + size);
  const publicOffset = offset - first;
  const preceding = await countPrecedingInRange(
    db,
    order,
    candidates.map((p) => p.id),
    publicOffset + 1,
    publicOffset + size,
  );
  const places = candidates.map((p) => publicOffset + (preceding.get(p.id) ?? 0));
  return { first, before: ordered(places, publicTotal, publicOffset) };
}

/**
 * A page ending within the first `shallowPlaces` of the merged order, given the first offset + size
 * private packages (the page can hold no later one): each placed at once among the public packages at
 * positions 1 to offset + size (countPrecedingInRange). One with all of those before it is past the page
 * whatever its exact place, so the count within them is enough.
 */
async function placeShallow(
  db: Db,
  order: RankOrder,
  privates: PrivateListRow[],
  publicTotal: number,
  offset: number,
  size: number,
): Promise<Placement> {
  const span = Math.min(offset + size, publicTotal);
  const preceding =
    span > 0
      ? await countPrecedingInRange(
          db,
          order,
          privates.map((p) => p.id),
          1,
          span,
        )
      : new Map<string, number>();
  const places = ordered(
    privates.map((p) => preceding.get(p.id) ?? 0),
    publicTotal,
  );
  return placementFrom(places, offset, size);
}

/**
 * Filtered: every private package placed among all public ones (countPublicBefore, one statement), then
 * among those passing the filters (countFilteredUpTo, one pass over the filters' positions). Costs a
 * binary search per private package that passes the filters: fine for the filtered share of an
 * organisation, and the filtered list's own cost is of that pass's order already.
 */
async function placeAll(
  db: Db,
  order: RankOrder,
  privates: PrivateListRow[],
  facets: FacetOperand[],
  publicTotal: number,
  offset: number,
  size: number,
): Promise<Placement> {
  const found = await countPublicBefore(
    db,
    order,
    privates.map((p) => p.id),
  );
  const unfiltered = ordered(
    privates.map((p) => found.get(p.id) ?? 0),
    Number.MAX_SAFE_INTEGER,
  );
  const places = ordered(await countFilteredUpTo(db, order, facets, unfiltered), publicTotal);
  return placementFrom(places, offset, size);
}

async function filteredCounts(db: Db, filters: PackageFilters): Promise<FilteredCounts> {
  const [facets, docs] = await Promise.all([facetOperands(db, filterKeys(filters)), countSearchDocs(db)]);
  return { facets, docs, total: await countFacets(db, facets, docs) };
}
