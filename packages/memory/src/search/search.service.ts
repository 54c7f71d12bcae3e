import {
  MEMORY_LIMITS,
  type MemoryScoreParts,
  type MemorySearchArgs,
  type MemorySearchRanking,
  type MemorySearchResult,
  type MemoryTier,
  RejectError,
} from '@pkgreg/contracts';
import type { DbOrTx } from '../db.js';
import { type Embedder, similarity } from '../embeddings/embedding-client.js';
import { readEmbeddings } from '../embeddings/embeddings.service.js';
import { toMemoryEntry } from '../entries/entry.mapper.js';
import { extractSearchTerms } from '../entries/search-terms.js';
import {
  activeRowsByIds,
  type Best,
  type Candidate,
  compareCandidates,
  olderCandidates,
  type RankParams,
  recentRows,
  type Scope,
  type WindowSummary,
  windowCandidates,
} from './search.repository.js';
import { DEFAULT_SEARCH_SETTINGS, type SearchSettings, scoreWeights } from './search-settings.js';

export type SearchEntriesArgs = Pick<MemorySearchArgs, 'query'> &
  Partial<Pick<MemorySearchArgs, 'tags' | 'topK' | 'namespace'>> & {
    /** The tiers to search, already narrowed by the caller to those it may read. */
    tiers: MemoryTier[];
  };

export interface SearchOptions {
  /** Validated with searchSettings(); default DEFAULT_SEARCH_SETTINGS. */
  settings?: SearchSettings;
  /** Semantic ranking: the query's embedding is fetched once per search. Absent: text and recency. */
  embedder?: Embedder | null;
  /** How long the query's embedding may take before the search ranks without it (ms). */
  embedTimeoutMs?: number;
  /** The instant recency is measured from; default the database's now() (tests pin it). */
  now?: Date;
}

const DAY_SECONDS = 86_400;

/**
 * pkgreg.memory.v1.search over active entries (docs/decisions.md, Memory search). Terms are OR-ed
 * prefixes (extractSearchTerms; English stop words dropped); an entry's score blends `text` (the share of
 * terms it matches, tags counting half), `recency` (2^(-age / half-life)) and, with an embedder,
 * `semantic` (cosine similarity), with normalized weights (scoreWeights). Ties: newest first.
 *
 * Bounded work. Every search reads the window: the newest `windowSize` active entries of the searched
 * tiers (an index-ordered scan), scoring each. k is `topK` (`semanticCandidates` with an embedder). An
 * older entry's recency is at most the window's oldest, and each term adds at most 1/n to its text, so
 * (MaxScore) it can outrank the window's k-th best only if it holds at least h terms, h the fewest with
 * which it could. The index phase then looks older entries up through the namespace's GIN keys, either
 * by the terms not among the h - 1 commonest in the window or by every h-term combination (terms common
 * in the window dropped from a combination that keeps another): of the two, the one fewer window matches
 * satisfy, and only if at most `olderMaxDensity` of the window does. It reads newest first (a slice of
 * four windows' time, then the rest), stops once nothing older can outrank the k-th best, and reads at
 * most `olderLimit` entries in all.
 *
 * Exact (`ranking.exact`: the results are the top `topK` of scoring every match) when
 * - the window holds every active entry of the tiers (namespaces of up to `windowSize` entries), or
 * - no older entry can outrank the window's k-th best (h would exceed the number of terms): e.g. a
 *   one-term query whose term is in the content of k window entries, a two-letter prefix of nearly every
 *   entry included, or
 * - the index phase read every older entry its formula matches, or all of them down to a time before
 *   which nothing can outrank the k-th best (at most `olderLimit` entries).
 * Otherwise (what an older entry would need to hold is common in the window, or has more than
 * `olderLimit` older matches) the results are the top `topK` of the window's matches: bounded.
 * With semantic ranking, the k best by text and recency are re-ranked with their similarity, and the
 * results are exact only when every match was read and there are at most k of them.
 *
 * `total` counts every match when `ranking.totalExact` (the window held every entry, or the index phase
 * looked up every term alone and read all it found, to the first entry); otherwise the matches read, a
 * lower bound.
 */
export async function searchEntries(
  db: DbOrTx,
  namespace: string,
  args: SearchEntriesArgs,
  options: SearchOptions = {},
): Promise<MemorySearchResult> {
  // The caller checked args.namespace against the subject; a mismatch here is a caller bug, refused safely.
  if (args.namespace !== undefined && args.namespace !== namespace)
    throw new RejectError('namespace_unauthorized');
  const settings = options.settings ?? DEFAULT_SEARCH_SETTINGS;
  const tiers = [...new Set(args.tiers)];
  const topK = Math.min(
    Math.max(args.topK ?? MEMORY_LIMITS.defaultSearchTopK, 1),
    MEMORY_LIMITS.maxSearchTopK,
  );
  const scope: Scope = { namespace, tiers, tags: args.tags ?? [] };
  const base = {
    halfLifeSeconds: settings.halfLifeDays * DAY_SECONDS,
    recencyWeight: settings.recencyWeight,
    now: options.now ? options.now.toISOString() : null,
  };
  const ranking = (fields: Omit<MemorySearchRanking, 'weights' | 'halfLifeDays'>, semantic = false) => ({
    weights: scoreWeights(settings, semantic),
    halfLifeDays: settings.halfLifeDays,
    ...fields,
  });
  const none = (): MemorySearchResult => ({
    results: [],
    total: 0,
    ranking: ranking({ exact: true, totalExact: true, semantic: 'off' }),
  });
  if (tiers.length === 0) return none();

  if (args.query.trim() === '') {
    // A blank query lists the newest entries: ranked by recency alone (text 0), exactly.
    const { rows, total } = await recentRows(db, scope, base, topK, settings.windowSize + 1);
    const weights = scoreWeights(settings, false);
    return {
      results: rows.map((row) => ({
        entry: toMemoryEntry(row),
        score: weights.recency * row.recency,
        scoreParts: { text: 0, recency: row.recency },
      })),
      total: Math.min(total, settings.windowSize),
      ranking: ranking({ exact: true, totalExact: total <= settings.windowSize, semantic: 'off' }),
    };
  }
  const terms = extractSearchTerms(args.query);
  // Text with no letters or digits ("!!!", "&|") searches for nothing rather than listing everything.
  if (terms.length === 0) return none();

  const embedder = options.embedder ?? null;
  // Fetched once, while the window is read; it never rejects (a failure is an outcome).
  const queryEmbedding = embedder
    ? embedder.embed([args.query], { timeoutMs: options.embedTimeoutMs })
    : null;
  const k = embedder ? Math.max(topK, settings.semanticCandidates) : topK;
  // Without re-ranking, the best k are the page: their entries come with them (no further round trip).
  const found = await findCandidates(db, scope, { ...base, terms }, settings, {
    limit: k,
    withRows: !embedder,
  });
  if (found === null) return none();

  const { candidates, exact, complete, matches } = found;
  const semantic = queryEmbedding ? await queryEmbedding : null;
  let ranked: { candidate: Candidate; score: number; parts: MemoryScoreParts }[];
  let fields: Omit<MemorySearchRanking, 'weights' | 'halfLifeDays'>;
  const text = (c: Candidate) => c.num / found.den;
  if (semantic?.ok) {
    const weights = scoreWeights(settings, true);
    const query = semantic.vectors[0] as Float32Array;
    const stored = await readEmbeddings(
      db,
      candidates.map((c) => c.entry_id),
      (embedder as Embedder).model,
      query.length,
    );
    ranked = candidates
      .map((candidate) => {
        const vector = stored.get(candidate.entry_id);
        const sim = vector ? similarity(query, vector) : undefined;
        const parts: MemoryScoreParts = { text: text(candidate), recency: candidate.recency };
        if (sim !== undefined) parts.semantic = sim;
        const score =
          weights.text * parts.text + weights.recency * parts.recency + (weights.semantic ?? 0) * (sim ?? 0);
        return { candidate, score, parts };
      })
      .sort((a, b) => b.score - a.score || compareCandidates(a.candidate, b.candidate));
    fields = { exact: complete && matches <= k, totalExact: complete, semantic: 'used' };
  } else {
    // Candidates come ordered by rank = text + recencyWeight * recency; the score is rank normalized.
    const sum = 1 + settings.recencyWeight;
    ranked = candidates.map((candidate) => ({
      candidate,
      score: candidate.rank / sum,
      parts: { text: text(candidate), recency: candidate.recency },
    }));
    fields = { exact, totalExact: complete, semantic: 'off' };
    if (semantic && !semantic.ok)
      fields = { ...fields, semantic: 'unavailable', semanticError: semantic.reason };
  }
  const page = ranked.slice(0, topK);
  const missing = page.filter((r) => !r.candidate.row).map((r) => r.candidate.entry_id);
  const fetched = new Map((await activeRowsByIds(db, namespace, missing)).map((row) => [row.entry_id, row]));
  const results = [];
  for (const r of page) {
    // An entry deleted or superseded since it was ranked is left out (the page is one short).
    const row = r.candidate.row ?? fetched.get(r.candidate.entry_id);
    if (row) results.push({ entry: toMemoryEntry(row), score: r.score, scoreParts: r.parts });
  }
  return { results, total: matches, ranking: ranking(fields, fields.semantic === 'used') };
}

export interface Found {
  /**
   * How the candidates were found: `window` (it held every entry), `bound` (no older entry can outrank
   * the window's k-th best), `index` (the index phase read every older match it looked for), `bounded`.
   */
  via: 'window' | 'bound' | 'index' | 'bounded';
  /** The best `k` matches read, by rank. */
  candidates: Candidate[];
  /** Twice the number of terms: text = num / den. */
  den: number;
  /** The candidates are the top `k` of every match. */
  exact: boolean;
  /** Every match was read (`matches` is their number). */
  complete: boolean;
  matches: number;
}

/** The window, then the index phase when it can make the top `k` exact (see searchEntries). Exported for tests. */
export async function findCandidates(
  db: DbOrTx,
  scope: Scope,
  p: RankParams,
  settings: SearchSettings,
  best: Best,
): Promise<Found | null> {
  const k = best.limit;
  const { summary, candidates } = await windowCandidates(db, scope, p, settings.windowSize, best);
  const effective = summary.effective.flatMap((isTerm, i) => (isTerm ? [i] : []));
  // Stop words only: no terms.
  if (effective.length === 0) return null;
  const den = 2 * effective.length;
  const found: Found = {
    via: 'window',
    candidates,
    den,
    exact: true,
    complete: true,
    matches: summary.matches,
  };
  if (summary.rows < settings.windowSize || summary.cutAt === null || summary.cutSeq === null) return found;
  found.complete = false;
  found.via = 'bound';

  // An older entry ranks at most (its terms, each at most 2 of den) + recencyWeight * the cut's recency,
  // and loses ties (it is older). Terms most often matched in the window are left out first while an
  // entry holding only them could not outrank the k-th best; the rest must be looked up.
  const cutRecency = summary.cutRecency ?? 1;
  const byFrequency = [...effective].sort(
    (a, b) => (summary.termMatches[b] ?? 0) - (summary.termMatches[a] ?? 0) || a - b,
  );
  // How many of the commonest terms an older entry could hold, recency r, and still not outrank the k-th best.
  const harmless = (kth: number, r: number) => {
    let j = 0;
    while (j < byFrequency.length && (2 * (j + 1)) / den + p.recencyWeight * r <= kth) j++;
    return j;
  };
  const leftOut = harmless(kthOf(candidates, k), cutRecency);
  const lookup = byFrequency.slice(leftOut);
  if (lookup.length === 0) return found;

  // What the index phase looks up: an entry that can outrank the k-th best holds a looked-up term, and
  // holds at least leftOut + 1 terms. Of the two, the one the window's matches say fewer entries satisfy.
  const formula = olderFormula(summary, effective, lookup, leftOut + 1, settings);
  if (formula === null) return bounded(found);

  // Newest first: a slice as long as 4 windows, then the rest at once (more slices cost a statement each).
  // It stops after the slice when no entry older than it can outrank the k-th best, which takes k matches
  // holding every term: a rare single word usually ends there. When the window holds too few entries
  // with every term for the slice to hold k, the rest is read at once without it.
  const allTerms = effective.reduce((mask, t) => mask + 2 ** t, 0);
  const full = summary.maskCounts.reduce((n, c) => (c.mask === allTerms ? n + c.count : n), 0);
  let ranked = candidates;
  let before = { at: summary.cutAt, seq: summary.cutSeq };
  let seconds: number | null = 4 * full >= k ? 4 * Math.max(summary.spanSeconds, MIN_SLICE_SECONDS) : null;
  let reads = 0;
  let matches = 0;
  for (;;) {
    const older = await olderCandidates(
      db,
      scope,
      { ...p, now: summary.now },
      { before, seconds },
      formula.clauses,
      settings.olderLimit - reads,
      best,
    );
    reads += older.hits;
    if (reads > settings.olderLimit) return bounded(found);
    ranked = [...ranked, ...older.candidates].sort(compareCandidates).slice(0, k);
    matches += older.matches;
    if (older.start === null) break;
    // Entries before the slice's start are no more recent than it.
    if (harmless(kthOf(ranked, k), older.start.recency) >= effective.length) break;
    before = { at: older.start.at, seq: 0 };
    seconds = null;
  }
  found.via = 'index';
  found.candidates = ranked;
  found.matches += matches;
  // Every match was read when every term alone was looked up down to the first entry.
  found.complete =
    seconds === null &&
    formula.clauses.length === effective.length &&
    formula.clauses.every((c) => c.length === 1);
  return found;
}

/** The window's span taken as at least this, for the first slice (a window written in one burst). */
const MIN_SLICE_SECONDS = 60;

function kthOf(candidates: Candidate[], k: number): number {
  return candidates.length >= k ? (candidates[k - 1] as Candidate).rank : Number.NEGATIVE_INFINITY;
}

/** Terms holding more of the window than this are left out of a combination when others remain. */
const COMMON_TERM_SHARE = 0.05;
/** Combinations of terms the index phase would look up at most (an OR of ANDs). */
const MAX_CLAUSES = 64;

const holds = (mask: number, term: number) => Math.floor(mask / 2 ** term) % 2 === 1;

/**
 * The index phase's formula (clauses: an OR of ANDs of terms), or null when the window shows more than
 * `olderMaxDensity` of entries satisfying the best candidate (older matches are then expected to be too
 * many to read). Candidates: any looked-up term; or every `need`-term combination, with terms common in
 * the window dropped from a combination that keeps another (dropping only widens it: still a superset).
 */
export function olderFormula(
  summary: WindowSummary,
  effective: number[],
  lookup: number[],
  need: number,
  settings: SearchSettings,
): { clauses: number[][]; density: number } | null {
  const share = (clauses: number[][]) => {
    let n = 0;
    for (const { mask, count } of summary.maskCounts) {
      if (clauses.some((clause) => clause.every((t) => holds(mask, t)))) n += count;
    }
    return n / summary.rows;
  };
  const options = [lookup.map((t) => [t])];
  if (need >= 2 && combinations(effective.length, need) <= MAX_CLAUSES) {
    const common = (t: number) => (summary.termMatches[t] ?? 0) / summary.rows > COMMON_TERM_SHARE;
    const clauses = new Map<string, number[]>();
    for (const combination of subsets(effective, need)) {
      const rare = combination.filter((t) => !common(t));
      const clause = rare.length > 0 ? rare : combination;
      clauses.set(clause.join(','), clause);
    }
    // (a) | (a & b) is (a): a clause holding another is dropped.
    const all = [...clauses.values()];
    options.push(
      all.filter((c) => !all.some((o) => o !== c && o.length < c.length && o.every((t) => c.includes(t)))),
    );
  }
  const best = options
    .map((clauses) => ({ clauses, density: share(clauses) }))
    .sort((a, b) => a.density - b.density || a.clauses.length - b.clauses.length)[0];
  return best && best.density <= settings.olderMaxDensity ? best : null;
}

function combinations(n: number, k: number): number {
  let c = 1;
  for (let i = 0; i < k; i++) c = (c * (n - i)) / (i + 1);
  return Math.round(c);
}

function* subsets(items: number[], size: number, start = 0, prefix: number[] = []): Generator<number[]> {
  if (prefix.length === size) {
    yield prefix;
    return;
  }
  for (let i = start; i <= items.length - (size - prefix.length); i++) {
    yield* subsets(items, size, i + 1, [...prefix, items[i] as number]);
  }
}

/** The top `k` of the window's matches, as they are: not shown to be the top of every match. */
function bounded(found: Found): Found {
  return { ...found, via: 'bounded', exact: false };
}
