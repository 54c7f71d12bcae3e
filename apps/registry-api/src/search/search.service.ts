import { SEARCH_MAX_RESULTS, type SearchResponse } from '@pkgreg/contracts';
import type { Db } from '@pkgreg/db';
import {
  countSearchDocs,
  matchesInSlice,
  prefixStats,
  type RankedMatch,
  type SearchRow,
  searchRowsByIds,
  searchSelective,
} from './search.repository.js';
import { exactOperand, prefixOperand, searchLexemes } from './search-terms.js';

/**
 * Query planning (docs/decisions.md, "Registry search"). Each term's prefix is looked up in the lexeme
 * statistics: a prefix that expands to at most `maxExpansions` stored lexemes is "narrow" and becomes an
 * OR of those exact lexemes, which the GIN index intersects cheaply; a prefix unknown to the statistics
 * (a word newer than the last rebuild) stays a prefix operand. When the narrow terms are expected
 * (independence of terms assumed, from the statistics) to leave at most `selectiveMaxDocs` candidates,
 * the answer is computed exactly over them. Counting the candidates from the GIN bitmap instead was
 * tried: it costs ~1 s for a term in half the packages.
 * Otherwise the query is broad: package_search_docs (already in ranking order) is read in growing
 * slices, stopping once the top 50 is certain (50 name matches seen, or the table's end) or, at the
 * latest, once 50 matches are in hand and `minWindow` rows were read. `total` is then extrapolated from
 * the rows read.
 */
export interface SearchPlanOptions {
  maxExpansions: number;
  selectiveMaxDocs: number;
  slices: number[];
  minWindow: number;
}

export const DEFAULT_SEARCH_PLAN: SearchPlanOptions = {
  maxExpansions: 64,
  selectiveMaxDocs: 3000,
  slices: [4000, 8000, 16_000, 32_000],
  minWindow: 12_000,
};

function toResult(row: SearchRow) {
  return {
    scope: row.scope,
    name: row.name,
    description: row.description,
    kind: row.kind,
    category: row.category ?? '',
    sourceRepo: row.source_repo,
    tokenCount: row.token_count,
    verified: row.verified,
  };
}

async function searchBroad(
  db: Db,
  lexemes: string[],
  plan: SearchPlanOptions,
  docs: number,
): Promise<{ rows: SearchRow[]; total: number; exact: boolean }> {
  const top: RankedMatch[] = [];
  let matches = 0;
  let nameMatches = 0;
  let scanned = 0;
  for (const size of plan.slices) {
    if (scanned >= docs) break;
    const slice = await matchesInSlice(db, lexemes, scanned + 1, scanned + size, SEARCH_MAX_RESULTS);
    top.push(...slice.top);
    matches += slice.matches;
    nameMatches += slice.nameMatches;
    scanned = Math.min(docs, scanned + size);
    if (nameMatches >= SEARCH_MAX_RESULTS) break;
    if (matches >= SEARCH_MAX_RESULTS && scanned >= plan.minWindow) break;
  }
  top.sort((a, b) => a.tier - b.tier || a.ord - b.ord);
  const chosen = top.slice(0, SEARCH_MAX_RESULTS);
  const byId = new Map(
    (
      await searchRowsByIds(
        db,
        chosen.map((m) => m.id),
      )
    ).map((row) => [row.id, row]),
  );
  const rows = chosen.flatMap((m) => byId.get(m.id) ?? []);
  const exact = scanned >= docs || scanned === 0;
  return { rows, total: exact ? matches : Math.round((matches / scanned) * docs), exact };
}

/** registry-api.md: Search rules 1-4 with decisions.md: Registry / Search. `q` arrives trimmed. */
export async function searchPackages(
  db: Db,
  q: string,
  plan: SearchPlanOptions = DEFAULT_SEARCH_PLAN,
): Promise<SearchResponse> {
  const lexemes = searchLexemes(q);
  // Empty, or nothing but punctuation: nothing can match, and no query is sent.
  if (lexemes.length === 0) return { results: [], total: 0 };
  const [stats, docs] = await Promise.all([
    prefixStats(db, lexemes, plan.maxExpansions),
    countSearchDocs(db),
  ]);
  const operands: string[] = [];
  let expected = Math.max(docs, 1);
  stats.forEach((stat, i) => {
    if (stat.lexemes.length > plan.maxExpansions) return; // broad prefix: checked on candidates only
    if (stat.lexemes.length === 0) {
      operands.push(prefixOperand(lexemes[i] ?? '')); // unknown to the statistics: rare by definition
      expected = 0;
      return;
    }
    operands.push(`(${stat.lexemes.map(exactOperand).join(' | ')})`);
    expected *= Math.min(1, stat.docs / Math.max(docs, 1));
  });
  const { rows, total } =
    operands.length > 0 && expected <= plan.selectiveMaxDocs
      ? await searchSelective(db, lexemes, operands.join(' & '), SEARCH_MAX_RESULTS)
      : await searchBroad(db, lexemes, plan, docs);
  return { results: rows.map(toResult), total };
}
