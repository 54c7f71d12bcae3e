import { SEARCH_MAX_RESULTS, type SearchResponse } from '@pkgreg/contracts';
import type { Db } from '@pkgreg/db';
import { searchRanked } from './search.repository.js';
import { searchLexemes } from './search-terms.js';

/** registry-api.md: Search rules 1-4 with decisions.md: Registry / Search. `q` arrives trimmed. */
export async function searchPackages(db: Db, q: string): Promise<SearchResponse> {
  const lexemes = searchLexemes(q);
  // Empty, or nothing but punctuation: nothing can match, and no query is sent.
  if (lexemes.length === 0) return { results: [], total: 0 };
  const { rows, total } = await searchRanked(db, lexemes, SEARCH_MAX_RESULTS);
  return {
    results: rows.map((row) => ({
      scope: row.scope,
      name: row.name,
      description: row.description,
      kind: row.kind,
      category: row.category ?? '',
      sourceRepo: row.source_repo,
      tokenCount: row.token_count,
      verified: row.verified,
    })),
    total,
  };
}
