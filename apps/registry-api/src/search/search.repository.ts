import type { Db } from '@pkgreg/db';
import { type RawBuilder, sql } from 'kysely';
import { prefixOperand } from './search-terms.js';

export interface SearchRow {
  scope: string;
  name: string;
  description: string;
  kind: 'skill' | 'composite' | 'workflow' | 'app';
  category: string | null;
  source_repo: string;
  token_count: number;
  verified: boolean;
  repo_stars: number;
}

/** Every lexeme as a prefix, anywhere: `simple` for names/scopes, `english` stems for descriptions. */
function anywhereQuery(lexemes: string[]): RawBuilder<unknown> {
  const terms = lexemes.map((lexeme) => {
    const operand = prefixOperand(lexeme);
    return sql`(to_tsquery('simple', ${operand}) || to_tsquery('english', ${operand}))`;
  });
  return sql`(${sql.join(terms, sql` && `)})`;
}

/** Every lexeme as a prefix within the given weights (A = name, B = scope). */
function weightedQuery(lexemes: string[], weights: string): RawBuilder<unknown> {
  return sql`to_tsquery('simple', ${lexemes.map((lexeme) => prefixOperand(lexeme, weights)).join(' & ')})`;
}

export async function searchRanked(
  db: Db,
  lexemes: string[],
  limit: number,
): Promise<{ rows: SearchRow[]; total: number }> {
  const result = await sql<SearchRow & { total: number }>`
    with q as (
      select ${anywhereQuery(lexemes)} as anywhere, ${weightedQuery(lexemes, 'A')} as name_only,
        ${weightedQuery(lexemes, 'AB')} as name_scope
    )
    select p.scope, p.name, p.description, p.kind, p.category, p.source_repo, p.token_count, p.verified,
      p.repo_stars, count(*) over () as total
    from packages p, q
    where p.search_vector @@ q.anywhere and p.status <> 'delisted'
    order by case when p.search_vector @@ q.name_only then 0 when p.search_vector @@ q.name_scope then 1 else 2 end,
      p.repo_stars desc, p.scope, p.name
    limit ${limit}`.execute(db);
  return { rows: result.rows, total: Number(result.rows[0]?.total ?? 0) };
}
