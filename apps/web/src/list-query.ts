import type { ListQuery } from '@pkgreg/contracts';

// List state lives in the URL query (page, sort, order) so back, forward and reload restore it.

export type ListSort = ListQuery['sort'];
export type ListOrder = ListQuery['order'];

export const LIST_SORT_OPTIONS = [
  { sort: 'name', label: 'Name' },
  { sort: 'stars', label: 'Stars' },
  { sort: 'indexed', label: 'Recently indexed' },
] as const satisfies readonly { sort: ListSort; label: string }[];

/** The order a sort starts in when picked: A to Z, most stars first, newest first. */
export const NATURAL_ORDER: Record<ListSort, ListOrder> = { name: 'asc', stars: 'desc', indexed: 'desc' };

export const PAGE_SIZE = 20;

export interface ListState {
  page: number;
  sort: ListSort;
  order: ListOrder;
}

const SORTS = new Set<string>(LIST_SORT_OPTIONS.map((o) => o.sort));

/** Reads the list state from a query string; anything out of rule falls back to the API's default. */
export function parseListState(search: string): ListState {
  const params = new URLSearchParams(search);
  const rawSort = params.get('sort') ?? '';
  const sort: ListSort = SORTS.has(rawSort) ? (rawSort as ListSort) : 'name';
  const rawOrder = params.get('order');
  const order: ListOrder = rawOrder === 'asc' || rawOrder === 'desc' ? rawOrder : NATURAL_ORDER[sort];
  const rawPage = params.get('page') ?? '';
  const page = /^[1-9]\d{0,6}$/.test(rawPage) ? Number(rawPage) : 1;
  return { page, sort, order };
}

/** The query string for a list state; defaults are left out so the home page stays `/`. */
export function listStateToSearch(state: ListState): string {
  const params = new URLSearchParams();
  if (state.sort !== 'name') params.set('sort', state.sort);
  if (state.order !== NATURAL_ORDER[state.sort]) params.set('order', state.order);
  if (state.page > 1) params.set('page', String(state.page));
  const text = params.toString();
  return text ? `?${text}` : '';
}

export function totalPages(total: number, pageSize = PAGE_SIZE): number {
  return Math.max(1, Math.ceil(total / pageSize));
}
