/** Terms beyond this many add cost, not recall. */
export const MAX_SEARCH_TERMS = 32;
/** Longer runs are not words; cut them so a prefix still matches. */
export const MAX_TERM_LENGTH = 64;

/**
 * Splits free text into search terms: runs of Unicode letters and digits, lowercased, deduplicated.
 * Everything else (tsquery operators, quotes, backslashes, emoji) is a separator, which is what keeps
 * any query text from ever reaching to_tsquery as syntax (decisions.md: never a 5xx for any input).
 */
export function extractSearchTerms(query: string): string[] {
  const terms = new Set<string>();
  for (const match of query.normalize('NFKC').matchAll(/[\p{L}\p{N}]+/gu)) {
    // By code point, so a cut never leaves half a surrogate pair.
    terms.add(Array.from(match[0].toLowerCase()).slice(0, MAX_TERM_LENGTH).join(''));
    if (terms.size >= MAX_SEARCH_TERMS) break;
  }
  return [...terms];
}
