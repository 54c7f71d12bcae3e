import type { PackageFilters } from '@pkgreg/contracts';
import type { Db } from '@pkgreg/db';
import { privateReadableSql, type ReadAccess } from '@pkgreg/registry';
import { type RawBuilder, sql } from 'kysely';
import { filterPredicate } from './filters.js';
import { rankingOrder, tierOf } from './search-ranking.js';
import { anywhereQuery, RESULT_COLUMNS, type SearchRow } from './search-sql.js';

// A reader's private matches (docs/search.md, "Private packages"): search's tables hold public packages
// only, so a reader with private access gets its private packages searched apart, ranked by the same
// tiers and order, then merged with the public answer by search.service.ts. Its candidates come from
// packages_private_search_keys_idx (migration 2026-11-29T0210): per scope, every lexeme and its first
// 2-4 characters, so a term is one key per scope (a longer one a short prefix range) and only the rows
// of the reader's scopes holding every term are read; each is then re-checked against the real terms.

/** A match with its tier, for merging in ranking order. */
export type TieredRow = SearchRow & { tier: number };

/**
 * The key query over the reader's scopes: each term (as typed, and its english stem) as
 * `<scope>/<form>`, exact for 2-4 characters (a stored key), a prefix otherwise (cut to 100 characters
 * as the stored keys are); the terms ANDed.
 */
function scopeKeysQuery(lexemes: string[], scopes: string[]): RawBuilder<unknown> {
  return sql`(
    select string_agg(t.q, ' & ')::tsquery from (
      select '(' || string_agg(
          '''' || replace(replace(s.scope || '/' || left(f.form, 100), '\\', '\\\\'), '''', '''''') || ''''
            || case when length(f.form) between 2 and 4 then '' else ':*' end, ' | ') || ')' as q
      from unnest(${lexemes}::text[]) with ordinality l(lexeme, i)
      cross join lateral (select l.lexeme
        union select unnest(tsvector_to_array(to_tsvector('english', l.lexeme)))) f(form)
      cross join unnest(${scopes}::text[]) s(scope)
      group by l.i) t)`;
}

/** The reader's top `limit` private matches in ranking order, and how many there are in all. */
export async function searchPrivate(
  db: Db,
  access: ReadAccess,
  lexemes: string[],
  filters: PackageFilters,
  limit: number,
): Promise<{ rows: TieredRow[]; total: number }> {
  const scopes = [...new Set([...access.scopes, ...access.packages.map((key) => key.split('/')[0] ?? '')])];
  // `offset 0` keeps the candidates' subquery apart, so they come from the key index however the
  // planner rates the reader's scopes on packages_private_idx (a materialized CTE would copy every row).
  const result = await sql<TieredRow & { total: number }>`
    select ${RESULT_COLUMNS}, true as private, ${tierOf(sql`p.search_vector`, lexemes)} as tier, count(*) over ()::int as total
    from (
      select p.* from packages p
      where p.private and p.status <> 'delisted' and p.quarantined_at is null
        and pkgreg_private_search_keys(p.scope, p.search_vector) @@ ${scopeKeysQuery(lexemes, scopes)}
      offset 0) p
    where ${privateReadableSql(access, 'p')} and ${filterPredicate(filters)}
      and p.search_vector @@ ${anywhereQuery(lexemes)}
    order by tier, ${rankingOrder('p')}
    limit ${limit}`.execute(db);
  const total = Number(result.rows[0]?.total ?? 0);
  return { rows: result.rows.map(({ total: _, ...row }) => ({ ...row, tier: Number(row.tier) })), total };
}
