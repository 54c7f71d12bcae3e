import type { PackageFilters } from '@pkgreg/contracts';
import type { Db } from '@pkgreg/db';
import { privateReadableSql, type ReadAccess } from '@pkgreg/registry';
import { sql } from 'kysely';
import { filterPredicate } from './filters.js';
import { rankingOrder, tierOf } from './search-ranking.js';
import { anywhereQuery, RESULT_COLUMNS, type SearchRow } from './search-sql.js';

// A reader's private matches (docs/search.md, "Private packages"): search's tables hold public packages
// only, so a reader with private access gets its private packages searched apart, on the rows of
// packages_private_idx its scopes and packages reach (bounded by its organisations), ranked by the
// same tiers and order, then merged with the public answer by search.service.ts.

/** A match with its tier, for merging in ranking order. */
export type TieredRow = SearchRow & { tier: number };

/** The reader's top `limit` private matches in ranking order, and how many there are in all. */
export async function searchPrivate(
  db: Db,
  access: ReadAccess,
  lexemes: string[],
  filters: PackageFilters,
  limit: number,
): Promise<{ rows: TieredRow[]; total: number }> {
  const result = await sql<TieredRow & { total: number }>`
    select ${RESULT_COLUMNS}, true as private, ${tierOf(sql`p.search_vector`, lexemes)} as tier, count(*) over ()::int as total
    from packages p
    where ${privateReadableSql(access, 'p')} and p.status <> 'delisted' and p.quarantined_at is null
      and ${filterPredicate(filters)} and p.search_vector @@ ${anywhereQuery(lexemes)}
    order by tier, ${rankingOrder('p')}
    limit ${limit}`.execute(db);
  const total = Number(result.rows[0]?.total ?? 0);
  return { rows: result.rows.map(({ total: _, ...row }) => ({ ...row, tier: Number(row.tier) })), total };
}

/** The tiers of public result rows (at most a page of them: one primary-key probe each). */
export async function tiersOf(db: Db, ids: string[], lexemes: string[]): Promise<Map<string, number>> {
  if (ids.length === 0) return new Map();
  const result = await sql<{ id: string; tier: number }>`
    select p.id, ${tierOf(sql`p.search_vector`, lexemes)} as tier from packages p where p.id = any(${ids}::uuid[])`.execute(
    db,
  );
  return new Map(result.rows.map((r) => [r.id, Number(r.tier)]));
}
