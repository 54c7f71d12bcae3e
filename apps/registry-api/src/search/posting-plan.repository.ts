import type { Db } from '@pkgreg/db';
import { type RawBuilder, sql } from 'kysely';
import {
  blockPositions,
  type FacetOperand,
  facetSteps,
  wholeFacetChain,
  wholeFacetSteps,
} from './facets.repository.js';
import { type ChainStep, chain } from './list-chain.js';
import { runNamed } from './named-statements.js';
import { type RankedMatch, rankedMatches, tierFrom } from './search-ranking.js';
import { RESULT_COLUMNS, recheckQueries, type SearchRow } from './search-sql.js';

/** Per query term, its keys into package_search_name_keys and package_search_blocks. */
export interface TermKeys {
  name: string[];
  /** The name keys hold exactly the packages whose name (or scope) holds the term, not a superset. */
  nameExact: boolean;
  block: string[];
  /** Packages its block keys reach, as the statistics count them (terms go rarest first). */
  postings: number;
}

/**
 * Chain steps for the positions holding every term in a posting table: per term the union of its keys'
 * lists, rarest term first. `where` narrows the table's rows (`s`) to a block.
 */
function termSteps(
  table: 'package_search_name_keys' | 'package_search_blocks',
  column: 'ords' | 'a' | 'ab',
  terms: Array<{ keys: string[]; cost: number }>,
  where: RawBuilder<unknown>,
): ChainStep[] {
  // Most name keys never occur in a scope: `a` as it is then, without a union's copy.
  const value =
    column === 'ab' ? sql`(case when s.b = '{}' then s.a else s.a | s.b end)` : sql.ref(`s.${column}`);
  const list = (key: string) =>
    sql`coalesce((select ${value} from ${sql.table(table)} s where s.key = ${key} ${where}), '{}')`;
  const union = (keys: string[]) =>
    keys.length === 0
      ? sql`'{}'::int4[]`
      : keys.length <= 4
        ? sql`(${sql.join(keys.map(list), sql` | `)})`
        : sql`coalesce((select pkgreg_int_union(${value}) from ${sql.table(table)} s where s.key = any((select ${keys}::text[])::text[]) ${where}), '{}')`;
  return terms.map((term) => ({ list: union(term.keys), op: '&' as const, cost: term.cost }));
}

export interface RankedChunk<S> {
  top: RankedMatch[];
  /** Matches among the candidates (re-checked), and those in ranking tier 0 and tier 2. */
  matches: number;
  tier0: number;
  tier2: number;
  scalars: S;
}

type ChunkRow<S> = Partial<SearchRow> &
  S & {
    ord: number | null;
    tier: number | null;
    visible: boolean;
    matches: number;
    tier0: number;
    tier2: number;
  };

/**
 * `ctes` (ending in the candidate positions `c(ord)`) re-checked against every term and ranked: the
 * best `limit` by tier then position with their result fields (read live from packages, so a delisting
 * since the rebuild is honoured), how many matches they hold, and the caller's `scalars` over the CTEs.
 * Always at least one row (`ord` null when nothing matched), so the scalars survive an empty chunk.
 */
async function rankCandidates<S extends object>(
  db: Db,
  lexemes: string[],
  ctes: RawBuilder<unknown>,
  scalars: RawBuilder<unknown>,
  limit: number,
): Promise<RankedChunk<S>> {
  const rows = await runNamed(
    db,
    sql<ChunkRow<S>>`
    with ${ctes}, ${recheckQueries(lexemes)},
    m as (
      select c.ord, d.id, ${tierFrom(sql`d.search_vector`)} as tier
      from c join package_search_docs d on d.ord = c.ord cross join q
      where d.search_vector @@ q.anywhere
    )
    select s.*, t.ord, t.tier, coalesce(t.matches, 0) as matches, coalesce(t.tier0, 0) as tier0,
      coalesce(t.tier2, 0) as tier2, p.id is not null as visible, ${RESULT_COLUMNS}
    from (select ${scalars}) s
    left join (
      select m.ord, m.id, m.tier, count(*) over ()::int as matches,
        (count(*) filter (where m.tier = 0) over ())::int as tier0,
        (count(*) filter (where m.tier = 2) over ())::int as tier2
      from m order by m.tier, m.ord limit (select ${limit}::int8)
    ) t on true
    left join packages p on p.id = t.id and p.status <> 'delisted' and p.quarantined_at is null and not p.private
    order by t.tier, t.ord`,
  );
  const first = rows[0];
  if (!first) throw new Error('rankCandidates: the scalar row is missing');
  return {
    top: rankedMatches(rows),
    matches: first.matches,
    tier0: first.tier0,
    tier2: first.tier2,
    scalars: first,
  };
}

/**
 * The positions whose name (`a`) or name + scope (`ab`) hold every term, and that pass the filters'
 * facets (their whole lists): one chain, rarest list first, differences last.
 */
function nameIntersection(
  column: 'a' | 'ab',
  terms: TermKeys[],
  facets: FacetOperand[],
  alias: string,
): { joins: RawBuilder<unknown>; value: RawBuilder<unknown> } {
  const steps = [
    ...termSteps(
      'package_search_name_keys',
      column,
      terms.map((t) => ({ keys: t.name, cost: t.postings })),
      sql``,
    ),
    ...wholeFacetSteps(facets),
  ];
  return chain(null, rarestFirst(steps), alias);
}

/** Intersections rarest first (they stop reading once empty), differences after them. */
function rarestFirst(steps: ChainStep[]): ChainStep[] {
  return [
    ...steps.filter((x) => x.op === '&').sort((a, b) => a.cost - b.cost),
    ...steps.filter((x) => x.op !== '&'),
  ];
}

/**
 * Name phase of the posting plan: the positions whose name + scope hold every term
 * (package_search_name_keys: a superset of ranking tiers 0 and 1, wherever they rank) and pass the
 * filters, and `count` of them from the `from`-th (1-based, in ranking order) re-checked and ranked.
 * `candidates`: how many positions the intersection holds.
 */
export async function nameMatches(
  db: Db,
  lexemes: string[],
  terms: TermKeys[],
  facets: FacetOperand[],
  from: number,
  count: number,
  limit: number,
): Promise<RankedChunk<{ candidates: number }>> {
  const names = nameIntersection('ab', terms, facets, 'p');
  // `offset 0` keeps the intersection one value that both outputs read (no copy of a long list).
  return rankCandidates<{ candidates: number }>(
    db,
    lexemes,
    sql`n as materialized (
        select icount(x.ords) as candidates, subarray(x.ords, ${from}::int4, ${count}::int4) as chunk
        from (select ${names.value} as ords from (select 1) one ${names.joins} offset 0) x),
      c as materialized (select o.ord from n, unnest(n.chunk) o(ord))`,
    sql`(select n.candidates from n) as candidates`,
    limit,
  );
}

/**
 * Filter plan: the positions passing every filter (the facets' whole lists) re-checked against every
 * term and ranked, all at once. `matches` is then exact.
 */
export async function filterMatches(
  db: Db,
  lexemes: string[],
  facets: FacetOperand[],
  limit: number,
): Promise<RankedChunk<object>> {
  const kept = wholeFacetChain(facets, 'f');
  return rankCandidates<object>(
    db,
    lexemes,
    sql`k as materialized (select ${kept.value} as ords from (select 1) one ${kept.joins} offset 0),
      c as materialized (select o.ord from k, unnest(k.ords) o(ord))`,
    sql`1 as one`,
    limit,
  );
}

/**
 * Name phase of the posting plan when every term's name keys are exact: ranking tiers 0 (every term
 * in the name) and 1 (in name + scope) as set operations over package_search_name_keys and the filters'
 * whole lists, wherever they rank, with no row read but the page's. `tier0`, `tier01`: how many
 * packages each holds.
 */
export async function nameTiers(
  db: Db,
  terms: TermKeys[],
  facets: FacetOperand[],
  limit: number,
): Promise<{ top: RankedMatch[]; tier0: number; tier01: number }> {
  const names = terms.map((t) => t.name);
  const inName = nameIntersection('a', terms, facets, 'a');
  const inNameOrScope = nameIntersection('ab', terms, facets, 'b');
  const rows = await runNamed(
    db,
    sql<
      Partial<SearchRow> & {
        tier0: number;
        tier01: number;
        ord: number | null;
        tier: number | null;
        visible: boolean;
      }
    >`
    with t0 as materialized (select ${inName.value} as t0 from (select 1) one ${inName.joins}),
    -- Tier 1 needs a term in a scope, and matters only while tier 0 is short of the page.
    x as materialized (
      select t0.t0, case
        when icount(t0.t0) < ${limit}::int4 and exists (select 1 from package_search_name_keys s
          where s.key = any((select ${names.flat()}::text[])::text[]) and s.b <> '{}')
        then (select ${inNameOrScope.value} from (select 1) one ${inNameOrScope.joins})
        else t0.t0 end as t01
      from t0),
    n as materialized (
      select icount(x.t0)::int as tier0, icount(x.t01)::int as tier01,
        subarray(x.t0, 1, ${limit}::int4) as top0, subarray(x.t01 - x.t0, 1, ${limit}::int4) as top1
      from x),
    c as (
      select o.ord, 0 as tier from n, unnest(n.top0) o(ord)
      union all select o.ord, 1 from n, unnest(n.top1) o(ord)),
    t as (
      select c.ord, c.tier, d.id from c join package_search_docs d on d.ord = c.ord
      order by c.tier, c.ord limit (select ${limit}::int8))
    select n.tier0, n.tier01, t.ord, t.tier, p.id is not null as visible, ${RESULT_COLUMNS}
    from n
    left join t on true
    left join packages p on p.id = t.id and p.status <> 'delisted' and p.quarantined_at is null and not p.private
    order by t.tier, t.ord`,
  );
  const first = rows[0];
  return {
    top: rankedMatches(rows),
    tier0: first?.tier0 ?? 0,
    // Not computed past a page of tier 0 (tier 1 cannot reach the page then): at least tier0.
    tier01: first?.tier01 ?? 0,
  };
}

/**
 * Where a block chunk reads: blocks `first`..`through`, and `count` positions of their intersections,
 * after the first `skip` of block `first`.
 */
export interface BlockRange {
  first: number;
  through: number;
  skip: number;
  count: number;
}

/**
 * Block phase of the posting plan: the blocks of `range` in package_search_blocks, each intersected over
 * the terms and the filters' facets (package_search_facets), and the positions `range` says re-checked
 * and ranked. `block_sizes`: each block's intersection size, in block order; `checked`: the positions
 * re-checked; `last_ord`: the last of them. With no term with blocks (the filter plan), the facets alone.
 */
export async function blockMatches(
  db: Db,
  lexemes: string[],
  terms: TermKeys[],
  facets: FacetOperand[],
  { first, through, skip, count }: BlockRange,
  limit: number,
  blockShift: number,
): Promise<RankedChunk<{ block_sizes: number[]; checked: number; last_ord: number | null }>> {
  const where = sql`and s.block = g.block`;
  const steps = [
    ...termSteps(
      'package_search_blocks',
      'ords',
      terms.filter((t) => t.block.length > 0).map((t) => ({ keys: t.block, cost: t.postings })),
      where,
    ),
    ...facetSteps(facets, where),
  ];
  const ordered = rarestFirst(steps);
  const base =
    ordered[0]?.op === '&'
      ? null
      : blockPositions(sql`g.block`, blockShift, sql`(select max(ord) from package_search_docs)`);
  const perBlock = chain(base, ordered, 'p');
  return rankCandidates<{ block_sizes: number[]; checked: number; last_ord: number | null }>(
    db,
    lexemes,
    sql`b as materialized (
        select g.block, ${perBlock.value} as ords
        from generate_series((select ${first}::int4), (select ${through}::int4)) g(block) ${perBlock.joins}),
      c as materialized (
        select o.ord from b,
          unnest(subarray(b.ords, case when b.block = ${first}::int4 then ${skip}::int4 + 1 else 1 end,
            ${count}::int4)) o(ord)
        order by o.ord limit (select ${count}::int8))`,
    sql`(select array_agg(icount(b.ords) order by b.block) from b) as block_sizes,
      (select count(*) from c)::int as checked, (select max(c.ord) from c) as last_ord`,
    limit,
  );
}
