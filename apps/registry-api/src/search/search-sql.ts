import { type RawBuilder, sql } from 'kysely';
import { prefixOperand } from './search-terms.js';

/** A result's columns, read live from packages (`p`) by every plan's statement. */
export interface SearchRow {
  id: string;
  scope: string;
  name: string;
  description: string;
  kind: 'skill' | 'composite' | 'workflow' | 'app';
  category: string | null;
  source_repo: string;
  token_count: number;
  verified: boolean;
  repo_stars: number;
  /** The latest version's risk: a column of the row every plan reads anyway. */
  risk: 'none' | 'low' | 'medium' | 'high' | null;
  /** Set on the rows of a reader's private matches (private-search.repository.ts). */
  private?: boolean;
  /** The row's tier (search-ranking.ts), as the plan that found it ranked it: the private merge's key. */
  tier?: number;
}

/** What a plan answers: the page, and the matches in all (exact or extrapolated, per plan). */
export interface SearchPage {
  rows: SearchRow[];
  total: number;
}

export const RESULT_COLUMNS = sql`p.id, p.scope, p.name, p.description, p.kind, p.category, p.source_repo,
  p.token_count, p.verified, p.repo_stars, p.risk`;

/**
 * One lexeme as a prefix anywhere: `simple` for names/scopes, `english` stems for descriptions. Most
 * words are their own stem, and `'data':* | 'data':*` checks every row that lacks it twice; the CASE
 * folds to one operand then (Postgres evaluates it once, when planning with the bound values).
 */
function lexemeQuery(lexeme: string): RawBuilder<unknown> {
  const operand = prefixOperand(lexeme);
  const simple = sql`to_tsquery('simple', ${operand})`;
  const english = sql`to_tsquery('english', ${operand})`;
  return sql`(case when ${english} = ${simple} then ${simple} else ${simple} || ${english} end)`;
}

/** Every lexeme as a prefix, anywhere (AND). */
export function anywhereQuery(lexemes: string[]): RawBuilder<unknown> {
  return sql`(${sql.join(lexemes.map(lexemeQuery), sql` && `)})`;
}

/** Every lexeme as a prefix within the given weights (A = name, B = scope). */
export function weightedQuery(lexemes: string[], weights: string): RawBuilder<unknown> {
  return sql`to_tsquery('simple', ${lexemes.map((lexeme) => prefixOperand(lexeme, weights)).join(' & ')})`;
}

/**
 * The three tsqueries of a re-check as one-row CTE `q` (anywhere, name+scope, name): computed once per
 * execution however the statement is planned. A generic plan cannot fold to_tsquery of a parameter
 * into a constant as a custom plan does, and would call it for every row tested.
 */
export function recheckQueries(lexemes: string[]): RawBuilder<unknown> {
  return sql`q as materialized (select ${anywhereQuery(lexemes)} as anywhere,
    ${weightedQuery(lexemes, 'AB')} as ab, ${weightedQuery(lexemes, 'A')} as a)`;
}
