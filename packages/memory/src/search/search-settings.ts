import type { MemorySearchRanking } from '@pkgreg/contracts';

/**
 * How memory search ranks and how much it reads (docs/decisions.md, Memory search). Each part of the
 * score is in [0, 1]; its weight is relative to text's (1), and the weights in use are normalized to
 * sum to 1, so a score is in [0, 1] too.
 */
export interface SearchSettings {
  /** Recency halves every this many days. */
  halfLifeDays: number;
  /** Weight of recency relative to text (1). */
  recencyWeight: number;
  /** Weight of semantic similarity relative to text (1), when an embedder is configured. */
  semanticWeight: number;
  /** The window: newest active entries (of the searched tiers) every search reads and scores. */
  windowSize: number;
  /** Older matches the index phase may read in all; past this many, the search is bounded to the window. */
  olderLimit: number;
  /**
   * The index phase runs when at most this share of the window satisfies what it would look up (it
   * decodes those postings for each slice of time it reads).
   */
  olderMaxDensity: number;
  /** Candidates (best by text and recency) re-ranked with semantic similarity. */
  semanticCandidates: number;
}

export const DEFAULT_SEARCH_SETTINGS: SearchSettings = {
  halfLifeDays: 30,
  recencyWeight: 0.4,
  semanticWeight: 1,
  windowSize: 1000,
  olderLimit: 500,
  olderMaxDensity: 0.05,
  semanticCandidates: 100,
};

export function searchSettings(overrides: Partial<SearchSettings> = {}): SearchSettings {
  const s = { ...DEFAULT_SEARCH_SETTINGS, ...overrides };
  const positive = (v: number) => Number.isFinite(v) && v > 0;
  const nonNegative = (v: number) => Number.isFinite(v) && v >= 0;
  if (!positive(s.halfLifeDays)) throw new RangeError('halfLifeDays must be > 0');
  if (!nonNegative(s.recencyWeight) || !nonNegative(s.semanticWeight)) {
    throw new RangeError('weights must be >= 0');
  }
  for (const key of ['windowSize', 'olderLimit', 'semanticCandidates'] as const) {
    if (!Number.isInteger(s[key]) || s[key] < 1) throw new RangeError(`${key} must be an integer >= 1`);
  }
  if (!nonNegative(s.olderMaxDensity) || s.olderMaxDensity > 1) {
    throw new RangeError('olderMaxDensity must be in [0, 1]');
  }
  return s;
}

/** The normalized weights of the parts in use. */
export function scoreWeights(s: SearchSettings, semantic: boolean): MemorySearchRanking['weights'] {
  const sum = 1 + s.recencyWeight + (semantic ? s.semanticWeight : 0);
  return semantic
    ? { text: 1 / sum, recency: s.recencyWeight / sum, semantic: s.semanticWeight / sum }
    : { text: 1 / sum, recency: s.recencyWeight / sum };
}
