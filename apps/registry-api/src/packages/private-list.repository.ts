import type { PackageFilters } from '@pkgreg/contracts';
import type { Db } from '@pkgreg/db';
import { privateReadableSql, type ReadAccess } from '@pkgreg/registry';
import { type RawBuilder, sql } from 'kysely';
import { type FacetOperand, wholeFacetChain } from '../search/facets.repository.js';
import { filterPredicate } from '../search/filters.js';
import type { ListRow, RankOrder } from './list.repository.js';

// A reader's private packages in a list (docs/search.md, "Private packages"): the rank tables hold public
// packages only, so a reader with private access gets its private packages (bounded by its
// organisations' scopes and its token's packages, read through packages_private_idx) merged into the
// public order. Each private package's place is the number of public packages before it in the order,
// found by a binary search over the order's dense positions: about log2(public packages) probes each.

/** One order's sort key on a packages row `alias`, and its direction; ties break by scope, then name. */
interface OrderKey {
  key: (alias: string) => RawBuilder<unknown>;
  desc: boolean;
}

const column = (name: string) => (alias: string) => sql.ref(`${alias}.${name}`);
const TODAY = sql`(now() at time zone 'UTC')::date`;
/** The trending score as pkgreg_refresh_popularity_ranks computes it, for one package, read live. */
const trendingScore = (alias: string) => sql`coalesce((select sum(d.count * (7 - (${TODAY} - d.day)))::bigint
  from package_downloads_daily d where d.package_id = ${sql.ref(`${alias}.id`)}
    and d.day > ${TODAY} - 7 and d.day <= ${TODAY}), 0)`;

const ORDER_KEYS: Record<RankOrder['column'], OrderKey> = {
  name_asc: { key: column('name'), desc: false },
  name_desc: { key: column('name'), desc: true },
  stars_asc: { key: column('repo_stars'), desc: false },
  stars_desc: { key: column('repo_stars'), desc: true },
  indexed_asc: { key: column('last_indexed_at'), desc: false },
  indexed_desc: { key: column('last_indexed_at'), desc: true },
  downloads_asc: { key: column('unique_download_count'), desc: false },
  downloads_desc: { key: column('unique_download_count'), desc: true },
  trending_asc: { key: trendingScore, desc: false },
  trending_desc: { key: trendingScore, desc: true },
};

/** `order by` of the order over packages row `alias`, as the rank tables number it. */
function orderBy(order: RankOrder, alias: string): RawBuilder<unknown> {
  const { key, desc } = ORDER_KEYS[order.column];
  return sql`${key(alias)} ${sql.raw(desc ? 'desc' : 'asc')}, ${sql.ref(`${alias}.scope`)}, ${sql.ref(`${alias}.name`)}`;
}

/**
 * Whether `q` comes before `p` in the order, both rows carrying their key as `k` (computed once each:
 * the trending key is a sum over the package's days).
 */
function precedes(order: RankOrder, q: string, p: string): RawBuilder<boolean> {
  const { desc } = ORDER_KEYS[order.column];
  const ref = (alias: string, name: string) => sql.ref(`${alias}.${name}`);
  const tie = sql`(${ref(q, 'scope')}, ${ref(q, 'name')}) < (${ref(p, 'scope')}, ${ref(p, 'name')})`;
  return desc
    ? sql<boolean>`(${ref(q, 'k')} > ${ref(p, 'k')} or (${ref(q, 'k')} = ${ref(p, 'k')} and ${tie}))`
    : sql<boolean>`((${ref(q, 'k')}, ${ref(q, 'scope')}, ${ref(q, 'name')}) < (${ref(p, 'k')}, ${ref(p, 'scope')}, ${ref(p, 'name')}))`;
}

const LIST_COLUMNS = sql`p.id, p.scope, p.name, p.description, p.kind, p.source_repo, p.repo_owner,
  p.repo_stars, p.license, p.last_indexed_at, p.risk, p.private`;

/** A private list item with its id (the merge's handle). */
export type PrivateListRow = ListRow & { id: string };

/** The visible private packages `access` may read, as a condition on packages row `p`. */
const readablePrivate = (access: ReadAccess) =>
  sql`${privateReadableSql(access, 'p')} and p.status <> 'delisted' and p.quarantined_at is null`;

/**
 * The visible private packages `access` may read that pass `filters`, in the order, the first `limit`
 * when given: read live through the partial indexes on private packages (its scopes, its packages). The
 * first `limit` are ranked from packages_private_list_idx alone (it holds every order's key, so no row
 * is read to rank them; filters on other columns read the rows they test), and only their rows are read.
 */
export async function listPrivateRows(
  db: Db,
  access: ReadAccess,
  order: RankOrder,
  filters: PackageFilters,
  limit?: number,
): Promise<PrivateListRow[]> {
  const matching = sql`packages p where ${readablePrivate(access)} and ${filterPredicate(filters)}`;
  const result =
    limit === undefined
      ? await sql<PrivateListRow>`
    select ${LIST_COLUMNS} from ${matching} order by ${orderBy(order, 'p')}`.execute(db)
      : await sql<PrivateListRow>`
    with top as materialized (select p.id from ${matching} order by ${orderBy(order, 'p')} limit ${limit})
    select ${LIST_COLUMNS} from top join packages p on p.id = top.id order by ${orderBy(order, 'p')}`.execute(
          db,
        );
  return result.rows;
}

/** How many visible private packages `access` may read (unfiltered lists' share of `total`). */
export async function countPrivateRows(db: Db, access: ReadAccess): Promise<number> {
  const result = await sql<{ n: number }>`
    select count(*)::int as n from packages p where ${readablePrivate(access)}`.execute(db);
  return Number(result.rows[0]?.n ?? 0);
}

/**
 * For each package of `ids`, how many public packages come before it in the order (0 to the highest
 * position): a binary search over the order's positions, all packages at once in one recursive
 * statement, about log2(public packages) index probes each. Keys are read live on both sides;
 * positions are as of the last refresh.
 */
export async function countPublicBefore(
  db: Db,
  order: RankOrder,
  ids: string[],
  bounds?: Array<[lo: number, hi: number]>,
): Promise<Map<string, number>> {
  if (ids.length === 0) return new Map();
  const { key } = ORDER_KEYS[order.column];
  const rank = sql.ref(`r.${order.column}`);
  const table = sql.table(order.table);
  // Known bounds (places of packages either side, from an earlier round) shorten each search; without
  // them a search spans 0 to the highest position.
  const los = ids.map((_, i) => bounds?.[i]?.[0] ?? 0);
  const his = ids.map((_, i) => bounds?.[i]?.[1] ?? null);
  // `offset 0` keeps each probe one subquery: inlined, the CASE below would run it twice.
  const result = await sql<{ id: string; before: number }>`
    with recursive n as (select coalesce(max(${rank}), 0) as n from ${table} r),
    s(id, k, scope, name, lo, hi) as (
      select p.id, ${key('p')}, p.scope, p.name, greatest(0, least(b.lo, n.n)), least(coalesce(b.hi, n.n), n.n)
      from unnest(${ids}::uuid[], ${los}::int[], ${his}::int[]) b(id, lo, hi)
      join packages p on p.id = b.id cross join n
      union all
      select s.id, s.k, s.scope, s.name,
        case when c.before then c.mid else s.lo end, case when c.before then s.hi else c.mid - 1 end
      from s
      cross join lateral (
        select m.mid, coalesce((select ${precedes(order, 'q', 's')}
          from (select q.scope, q.name, ${key('q')} as k from ${table} r join packages q on q.id = r.id
            where ${rank} = m.mid) q), false) as before
        from (select (s.lo + s.hi + 1) / 2 as mid) m offset 0
      ) c
      where s.lo < s.hi
    )
    select id, lo as before from s where lo >= hi`.execute(db);
  return new Map(result.rows.map((r) => [r.id, Number(r.before)]));
}

/**
 * For each package of `ids`, how many of the public packages at positions `from` to `to` of the order
 * come before it: a page's worth of keys compared with a page's worth (a list page's private packages
 * all sit within one public page of each other, so this places them once the first is placed).
 */
export async function countPrecedingInRange(
  db: Db,
  order: RankOrder,
  ids: string[],
  from: number,
  to: number,
): Promise<Map<string, number>> {
  if (ids.length === 0) return new Map();
  const { key } = ORDER_KEYS[order.column];
  const rank = sql.ref(`r.${order.column}`);
  const result = await sql<{ id: string; n: number }>`
    with w as materialized (
      select q.scope, q.name, ${key('q')} as k from ${sql.table(order.table)} r join packages q on q.id = r.id
      where ${rank} between ${from} and ${to}
    ), c as materialized (
      select p.id, p.scope, p.name, ${key('p')} as k from packages p where p.id = any(${ids}::uuid[])
    )
    select c.id, (select count(*) from w where ${precedes(order, 'w', 'c')})::int as n from c`.execute(db);
  return new Map(result.rows.map((r) => [r.id, Number(r.n)]));
}

/**
 * For each bound (positions in the order, ascending), how many public packages passing the filters'
 * facet lists (as of the last rebuild, as the filtered list's `total`) sit at or before it: one pass over
 * the filtered positions, bucketed by the bounds.
 */
export async function countFilteredUpTo(
  db: Db,
  order: RankOrder,
  facets: FacetOperand[],
  bounds: number[],
): Promise<number[]> {
  if (bounds.length === 0) return [];
  const rank = sql.ref(`r.${order.column}`);
  const kept = wholeFacetChain(facets, 'f');
  // width_bucket(x, thresholds) is how many thresholds are <= x. With the thresholds `bound + 1`, a
  // position at or before bound i has a bucket of at most i: the count is the sum of buckets 0 to i.
  const result = await sql<{ bucket: number; n: number }>`
    with s as materialized (
      select o.ord from (select 1) one ${kept.joins} cross join lateral unnest(${kept.value}) o(ord)
    )
    select width_bucket(${rank}, ${bounds.map((b) => b + 1)}::int[]) as bucket, count(*)::int as n
    from s join package_search_docs d on d.ord = s.ord join ${sql.table(order.table)} r on r.id = d.id
    group by 1`.execute(db);
  const perBucket = new Map(result.rows.map((r) => [Number(r.bucket), Number(r.n)]));
  const counts: number[] = [];
  let sum = 0;
  for (let i = 0; i < bounds.length; i += 1) {
    sum += perBucket.get(i) ?? 0;
    counts.push(sum);
  }
  return counts;
}
