import type { Db } from '@pkgreg/db';
import { type RawBuilder, sql } from 'kysely';
import { type FacetOperand, facetSteps } from './facets.repository.js';
import { chain } from './list-chain.js';
import { type RankedMatch, rankedMatches, tierOf } from './search-ranking.js';
import { anywhereQuery, RESULT_COLUMNS, type SearchRow } from './search-sql.js';

/** What one slice of the scan held: its best matches, and how many matches and name matches in all. */
export interface SliceMatches {
  top: RankedMatch[];
  matches: number;
  nameMatches: number;
}

/**
 * Scan plan, one slice of package_search_docs (positions from..to): the best `limit` matches by tier
 * then position, with their result fields read live from packages in the same statement (so a search
 * that one slice settles costs one round trip; a delisting since the rebuild is honoured), and how many
 * matches (and name matches) the slice holds; only those rows leave Postgres.
 */
export async function matchesInSlice(
  db: Db,
  lexemes: string[],
  from: number,
  to: number,
  limit: number,
  /**
   * initialsMask of the one-character terms (null: none): rows are first taken from the narrow
   * package_search_initials, and only the rows with every such bit are tested.
   */
  initials: bigint | null = null,
  /** The filters' facets: only the slice's positions in their lists are tested (none: every row). */
  facets: FacetOperand[] = [],
  blockShift = 16,
): Promise<SliceMatches> {
  const mask = sql`(i.initials & ${String(initials)}::int8) = ${String(initials)}::int8`;
  let rows: RawBuilder<unknown>;
  if (facets.length > 0) {
    // Each block the slice touches: its positions in the slice, through the chain of the block's facets.
    const shift = sql.lit(blockShift);
    const filter = chain(sql`r.a`, facetSteps(facets, sql`and s.block = g.block`), 'f');
    const kept = sql`(select o.ord from generate_series(${from}::int4 >> ${shift}, ${to}::int4 >> ${shift}) g(block)
        cross join lateral (select array(select generate_series(greatest(${from}::int4, g.block << ${shift}),
          least(${to}::int4, ((g.block + 1) << ${shift}) - 1)))::int4[] as a offset 0) r
        ${filter.joins} cross join lateral unnest(${filter.value}) o(ord)) k`;
    rows =
      initials === null
        ? sql`${kept} join package_search_docs d on d.ord = k.ord where true`
        : sql`${kept} join package_search_initials i on i.ord = k.ord join package_search_docs d on d.ord = k.ord
          where ${mask}`;
  } else {
    rows =
      initials === null
        ? sql`package_search_docs d where d.ord between ${from} and ${to}`
        : sql`package_search_initials i join package_search_docs d on d.ord = i.ord
          where i.ord between ${from} and ${to} and ${mask}`;
  }
  const result = await sql<
    Partial<SearchRow> & {
      ord: number;
      tier: number;
      visible: boolean;
      matches: number;
      name_matches: number;
    }
  >`
    select t.ord, t.tier, t.matches, t.name_matches, p.id is not null as visible, ${RESULT_COLUMNS}
    from (
      select m.ord, m.id, m.tier, count(*) over ()::int as matches,
        (count(*) filter (where m.tier = 0) over ())::int as name_matches
      from (
        select d.ord, d.id, ${tierOf(sql`d.search_vector`, lexemes)} as tier
        from ${rows} and d.search_vector @@ ${anywhereQuery(lexemes)}
      ) m
      order by m.tier, m.ord
      limit ${limit}
    ) t
    left join packages p on p.id = t.id and p.status <> 'delisted' and p.quarantined_at is null and not p.private
    order by t.tier, t.ord`.execute(db);
  const first = result.rows[0];
  return {
    top: rankedMatches(result.rows),
    matches: first?.matches ?? 0,
    nameMatches: first?.name_matches ?? 0,
  };
}
