import type { ListQuery, PackageFilters } from '@pkgreg/contracts';
import { filterParams } from '@pkgreg/registry-client/paths';

/** The filters as query parameters, in the API's order (the registry client's, so both send the same). */
export { filterParams };

// List state lives in the URL query (page, sort, order, filters) so back, forward and reload restore
// it. The filters keep the API's own parameter names, so a page's URL reads like its API request.

export type ListSort = ListQuery['sort'];
export type ListOrder = ListQuery['order'];

export const LIST_SORT_OPTIONS = [
  { sort: 'name', label: 'Name' },
  { sort: 'stars', label: 'Stars' },
  { sort: 'downloads', label: 'Downloads' },
  { sort: 'trending', label: 'Trending' },
  { sort: 'indexed', label: 'Recently indexed' },
] as const satisfies readonly { sort: ListSort; label: string }[];

/** The order a sort starts in when picked: A to Z, most stars, downloads and trending first, newest first. */
export const NATURAL_ORDER: Record<ListSort, ListOrder> = {
  name: 'asc',
  stars: 'desc',
  indexed: 'desc',
  downloads: 'desc',
  trending: 'desc',
};

export const PAGE_SIZE = 20;

export interface ListState {
  page: number;
  sort: ListSort;
  order: ListOrder;
  filters: PackageFilters;
}

const SORTS = new Set<string>(LIST_SORT_OPTIONS.map((o) => o.sort));
const KINDS = ['skill', 'composite', 'workflow', 'app'] as const;
const RISKS = ['none', 'low', 'medium', 'high'] as const;
const STATUSES = ['active', 'deprecated'] as const;
const SCOPE = /^(?!-)(?!.*--)[a-z0-9-]{1,64}(?<!-)$/;
// What the API accepts for free-text filters (contracts: 1-64 characters without controls).
const TEXT = /^[^\p{Cc}]{1,64}$/u;
const LICENSE = /^[^\p{Cc}]{1,128}$/u;

const oneOf = <T extends string>(values: readonly T[], value: string | null): T | undefined =>
  value !== null && (values as readonly string[]).includes(value) ? (value as T) : undefined;

const text = (pattern: RegExp, value: string | null): string | undefined => {
  const trimmed = value?.trim().toLowerCase();
  return trimmed && pattern.test(trimmed) ? trimmed : undefined;
};

/** The filters of a query string; a value out of the API's rule is left out rather than sent for a 400. */
export function parseFilters(search: string): PackageFilters {
  const params = new URLSearchParams(search);
  const verified = params.get('verified');
  const filters: PackageFilters = {
    kind: oneOf(KINDS, params.get('kind')),
    category: text(TEXT, params.get('category')),
    tag: text(TEXT, params.get('tag')),
    agent: text(TEXT, params.get('agent')),
    license: text(LICENSE, params.get('license')),
    verified: verified === 'true' ? true : verified === 'false' ? false : undefined,
    status: oneOf(STATUSES, params.get('status')),
    risk: oneOf(RISKS, params.get('risk')),
    owner: text(SCOPE, params.get('owner')),
  };
  return withoutUndefined(filters);
}

function withoutUndefined(filters: PackageFilters): PackageFilters {
  return Object.fromEntries(
    Object.entries(filters).filter(([, value]) => value !== undefined),
  ) as PackageFilters;
}

/** Reads the list state from a query string; anything out of rule falls back to the API's default. */
export function parseListState(search: string): ListState {
  const params = new URLSearchParams(search);
  const rawSort = params.get('sort') ?? '';
  const sort: ListSort = SORTS.has(rawSort) ? (rawSort as ListSort) : 'name';
  const rawOrder = params.get('order');
  const order: ListOrder = rawOrder === 'asc' || rawOrder === 'desc' ? rawOrder : NATURAL_ORDER[sort];
  const rawPage = params.get('page') ?? '';
  const page = /^[1-9]\d{0,6}$/.test(rawPage) ? Number(rawPage) : 1;
  return { page, sort, order, filters: parseFilters(search) };
}

/**
 * The query string for a list state, keeping `q` (the search typed) when given; defaults are left out
 * so the home page stays `/`.
 */
export function listStateToSearch(state: ListState, q = ''): string {
  const params = new URLSearchParams();
  if (q.trim()) params.set('q', q);
  if (state.sort !== 'name') params.set('sort', state.sort);
  if (state.order !== NATURAL_ORDER[state.sort]) params.set('order', state.order);
  for (const [name, value] of filterParams(state.filters)) params.set(name, value);
  if (state.page > 1) params.set('page', String(state.page));
  const text = params.toString();
  return text ? `?${text}` : '';
}

export function hasFilters(filters: PackageFilters): boolean {
  return filterParams(filters).length > 0;
}

export function totalPages(total: number, pageSize = PAGE_SIZE): number {
  return Math.max(1, Math.ceil(total / pageSize));
}
