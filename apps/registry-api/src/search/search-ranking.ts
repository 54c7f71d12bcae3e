import { type RawBuilder, sql } from 'kysely';
import { type SearchRow, weightedQuery } from './search-sql.js';

// How search ranks: a tier first (0 = every term in the name, 1 = in name + scope, 2 = anywhere), then
// the ranking order. package_search_docs numbers its rows (`ord`) in the ranking order, so within a
// tier the smaller position ranks first, and every plan reads in that order.

/** The ranking order within a tier, most starred first; `alias` qualifies the columns. */
export function rankingOrder(alias?: string): RawBuilder<unknown> {
  const column = (name: string) => (alias ? `${alias}.${name}` : name);
  return sql.raw(`${column('repo_stars')} desc, ${column('scope')}, ${column('name')}`);
}

/**
 * Compares two rows as the ranking does (tier, then repo_stars desc, scope, name): for merging rows of
 * different statements. Scopes and names are [a-z0-9-], compared by code point as the database does
 * under a C collation; under another one a tie of tier and stars may come out the other way.
 */
export function byTierAndRank(a: SearchRow & { tier: number }, b: SearchRow & { tier: number }): number {
  return (
    a.tier - b.tier ||
    b.repo_stars - a.repo_stars ||
    compareText(a.scope, b.scope) ||
    compareText(a.name, b.name)
  );
}

function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * A match by its position in the ranking order; `row` null when it left public search (delisted,
 * quarantined, made private) since the tables' rebuild.
 */
export interface RankedMatch {
  ord: number;
  tier: number;
  row: SearchRow | null;
}

/**
 * How many of these matches left public search since the rebuild: a plan takes them off its count, so
 * that a total never counts a package the page cannot show (a private one above all).
 */
export function hiddenAmong(matches: Iterable<RankedMatch>): number {
  let hidden = 0;
  for (const match of matches) if (match.row === null) hidden += 1;
  return hidden;
}

/** The visible rows of ranked matches, each with its tier. */
export function rowsOf(matches: RankedMatch[]): SearchRow[] {
  return matches.flatMap((m) => (m.row ? [{ ...m.row, tier: m.tier }] : []));
}

/** Compares two matches as the ranking does. */
export function byRank(a: RankedMatch, b: RankedMatch): number {
  return a.tier - b.tier || a.ord - b.ord;
}

/**
 * The tier of a vector, name + scope tested first: most matches of a broad query are description
 * matches, which then cost one check instead of two.
 */
export function tierOf(vector: RawBuilder<unknown>, lexemes: string[]): RawBuilder<number> {
  return sql<number>`case when not ${vector} @@ ${weightedQuery(lexemes, 'AB')} then 2
    when ${vector} @@ ${weightedQuery(lexemes, 'A')} then 0 else 1 end`;
}

/** tierOf with the tsqueries of recheckQueries' `q`. */
export function tierFrom(vector: RawBuilder<unknown>): RawBuilder<number> {
  return sql<number>`case when not ${vector} @@ q.ab then 2 when ${vector} @@ q.a then 0 else 1 end`;
}

/** Rows of a ranked statement (`ord`/`tier` null on a scalar-only row) as matches, fields when visible. */
export function rankedMatches(
  rows: Array<Partial<SearchRow> & { ord: number | null; tier: number | null; visible: boolean }>,
): RankedMatch[] {
  return rows.flatMap((r) =>
    r.ord === null || r.tier === null
      ? []
      : // A visible row carries every SearchRow column (the left join matched).
        [{ ord: r.ord, tier: r.tier, row: r.visible ? (r as SearchRow) : null }],
  );
}
