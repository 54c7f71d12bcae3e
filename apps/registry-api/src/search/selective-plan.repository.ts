import type { PackageFilters } from '@pkgreg/contracts';
import type { Db } from '@pkgreg/db';
import { sql } from 'kysely';
import { filterPredicate } from './filters.js';
import { rankingOrder, tierOf } from './search-ranking.js';
import { anywhereQuery, RESULT_COLUMNS, type SearchPage, type SearchRow } from './search-sql.js';

/**
 * Selective plan: the GIN index intersects the posting lists of `indexQuery` (exact lexemes and keys,
 * never a prefix range), and the candidates are re-checked, ranked and counted, so the answer is exact,
 * total included. `recheck: false` when every candidate already matches. Filters are checked on each
 * candidate's row, which the plan reads anyway.
 */
export async function selectivePlan(
  db: Db,
  lexemes: string[],
  indexQuery: string,
  limit: number,
  recheck = true,
  filters: PackageFilters = {},
): Promise<SearchPage> {
  const result = await sql<SearchRow & { total: number }>`
    with candidates as materialized (
      select ${RESULT_COLUMNS}, p.search_vector from packages p
      where pkgreg_search_keys(p.search_vector) @@ to_tsquery('simple', ${indexQuery})
        and p.status <> 'delisted' and p.quarantined_at is null and not p.private and ${filterPredicate(filters)}
    )
    select p.id, p.scope, p.name, p.description, p.kind, p.category, p.source_repo, p.token_count, p.verified,
      p.repo_stars, p.risk, ${tierOf(sql`p.search_vector`, lexemes)} as tier, count(*) over ()::int as total
    from candidates p
    ${recheck ? sql`where p.search_vector @@ ${anywhereQuery(lexemes)}` : sql``}
    order by tier, ${rankingOrder('p')}
    limit ${limit}`.execute(db);
  return {
    rows: result.rows.map(({ total: _, ...row }) => ({ ...row, tier: Number(row.tier) })),
    total: Number(result.rows[0]?.total ?? 0),
  };
}
