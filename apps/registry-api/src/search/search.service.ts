import { SEARCH_MAX_RESULTS, type SearchResponse } from '@pkgreg/contracts';
import type { Db } from '@pkgreg/db';
import {
  blockMatches,
  countSearchDocs,
  matchesInSlice,
  nameMatches,
  nameTiers,
  type PrefixStats,
  prefixStats,
  type RankedMatch,
  SEARCH_BLOCK_SHIFT,
  SEARCH_KEY_LENGTH,
  type SearchRow,
  searchSelective,
  type TermKeys,
} from './search.repository.js';
import { exactOperand, initialsMask, prefixOperand, searchLexemes } from './search-terms.js';

/**
 * Query planning (docs/decisions.md, "Registry search"). Each term's prefix is looked up in the lexeme
 * statistics: a prefix that expands to at most `maxExpansions` stored lexemes is "narrow" and becomes an
 * OR of those exact lexemes; a broader one becomes its prefix keys (its first 2-4 characters, stored per
 * package by pkgreg_search_keys); a prefix unknown to the statistics (a word newer than the last
 * rebuild) stays a prefix operand. The GIN index over the keys intersects all of them in one scan. When
 * they are expected (independence of terms assumed, from the statistics) to leave at most
 * `selectiveMaxDocs` candidates, the answer is computed exactly over them. Counting the candidates from
 * the GIN bitmap instead was tried: it costs ~1 s for a term in half the packages.
 * Otherwise the query is broad: package_search_docs (already in ranking order) is read in rounds that
 * end on a slice boundary, stopping once the top 50 is certain (50 name matches seen, or the table's
 * end) or, at the latest, once 50 matches are in hand and `minWindow` rows were read. After the first
 * round, the next reads at once what the rows seen say is still needed (the rest of `minWindow`, or
 * enough rows for 50 matches at the density seen), split into `parallel` runs on their own
 * connections. `total` is then extrapolated from the rows read. If the slices end with fewer than 50
 * matches, the terms were rarer together than the statistics said, and the index query answers
 * exactly instead.
 */
export interface SearchPlanOptions {
  maxExpansions: number;
  selectiveMaxDocs: number;
  slices: number[];
  minWindow: number;
  /**
   * Matches the first broad slice aims to hold, by the statistics' density: a term in half the packages
   * then reads ~800 rows, not slices[0] (its ~50 name matches are in the first few hundred). Capped by
   * slices[0]; when smaller, slices[0] and the rest follow it.
   */
  firstSliceMatches: number;
  /** Smallest first slice: the statistics over-count, and a second slice costs a round trip. */
  minFirstSlice: number;
  /**
   * What one selective candidate costs in GIN postings decoded: ~3 µs per candidate (a packages heap
   * page and the re-check) against ~15-40 ns per posting, measured at 1M packages.
   */
  postingsPerCandidate: number;
  /** Runs a round of slices is read in at once, one pool connection each. */
  parallel: number;
  /** Smallest run worth its own statement (~0.3 ms of overhead against ~0.4 µs per row read). */
  minChunk: number;
  /** Positions per block as log2: what package_search_blocks was rebuilt with (SEARCH_BLOCK_SHIFT). */
  blockShift: number;
  /** Name candidates the posting plan's first round re-checks (then 4x per round). */
  nameChunk: number;
  /** Block positions the posting plan's first round re-checks. */
  blockChunk: number;
  /** Most positions one chunk re-checks (~2-3 µs each). */
  maxChunk: number;
  /** Most blocks the first round intersects (four times as many each round after). */
  firstRoundBlocks: number;
  /** Most GIN postings a selective plan may decode when the posting plan could answer instead. */
  selectiveMaxPostings: number;
  /**
   * Most candidates a selective plan may rank when the posting plan could answer instead: each costs
   * ~4-5 µs (its packages row read, re-checked and ranked), the posting plan's cost follows the page.
   */
  selectiveMaxDocsBesidePostings: number;
  /** Off: the posting plan is never taken (the A/B and exactness checks use it). */
  postingPlan: boolean;
  /**
   * The scan plan takes rows through package_search_initials (one-character terms) when the statistics
   * expect at most this share of rows to match: each row it lets through costs a probe of
   * package_search_docs (~1 µs) where the plain scan tests a row in ~0.27 µs, so for dense terms ("s t")
   * the plain scan is faster.
   */
  initialsMaxDensity: number;
}

export const DEFAULT_SEARCH_PLAN: SearchPlanOptions = {
  maxExpansions: 64,
  selectiveMaxDocs: 3000,
  slices: [4000, 8000, 16_000, 32_000],
  minWindow: 12_000,
  firstSliceMatches: 400,
  minFirstSlice: 500,
  postingsPerCandidate: 100,
  parallel: 2,
  minChunk: 2000,
  blockShift: SEARCH_BLOCK_SHIFT,
  nameChunk: 200,
  blockChunk: 200,
  maxChunk: 8000,
  firstRoundBlocks: 4,
  selectiveMaxPostings: 30_000,
  selectiveMaxDocsBesidePostings: 1000,
  postingPlan: true,
  initialsMaxDensity: 0.1,
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

/** Splits positions after..through into `parts` runs of at least `minRows` rows (fewer runs when short). */
function chunks(after: number, through: number, parts: number, minRows: number): Array<[number, number]> {
  const count = Math.max(1, Math.min(parts, Math.floor((through - after) / Math.max(minRows, 1))));
  const size = Math.ceil((through - after) / count);
  const runs: Array<[number, number]> = [];
  for (let from = after; from < through; from += size) runs.push([from, Math.min(through, from + size)]);
  return runs;
}

async function searchBroad(
  db: Db,
  lexemes: string[],
  plan: SearchPlanOptions,
  docs: number,
  expectedMatches: number,
  /** The index query holds every term, so the caller can answer exactly when the page stays short. */
  exactFallback: boolean,
): Promise<{ rows: SearchRow[]; total: number; exact: boolean; matches: number }> {
  const top: RankedMatch[] = [];
  let matches = 0;
  let nameMatches = 0;
  let scanned = 0;
  const density = Math.max(expectedMatches, 1) / Math.max(docs, 1);
  const initials = density <= plan.initialsMaxDensity ? initialsMask(lexemes) : null;
  const [planned = 0] = plan.slices;
  const wanted = Math.ceil(plan.firstSliceMatches / density);
  const first = Math.min(planned, Math.max(plan.minFirstSlice, wanted));
  const sizes = first < planned ? [first, ...plan.slices] : plan.slices;
  // Where a round may end: after each slice (positions, capped by the table).
  const ends: number[] = [];
  for (const size of sizes) ends.push(Math.min(docs, (ends.at(-1) ?? 0) + size));
  const last = ends.at(-1) ?? 0;
  const endFor = (rows: number) => ends.find((end) => end >= rows) ?? last;
  // The first round is the first slice; when even slices[0] is expected to hold fewer than
  // firstSliceMatches, the slices up to minWindow (unless 50 name matches turn up, the rounds would
  // read them all anyway). Each later round reads what the rows seen so far say is still needed:
  // up to minWindow while name matches are short, and enough for 50 matches at the density seen.
  let through = ends[0] ?? 0;
  if (wanted > planned) for (const end of ends) if (end <= plan.minWindow) through = Math.max(through, end);
  while (through > scanned) {
    // One round: its rows in up to `parallel` runs at once, one connection each, so its latency is
    // the largest run's rather than the sum.
    const slices = await Promise.all(
      chunks(scanned, through, plan.parallel, plan.minChunk).map(([after, to]) =>
        matchesInSlice(db, lexemes, after + 1, to, SEARCH_MAX_RESULTS, initials),
      ),
    );
    for (const slice of slices) {
      top.push(...slice.top);
      matches += slice.matches;
      nameMatches += slice.nameMatches;
    }
    scanned = through;
    if (scanned >= docs || nameMatches >= SEARCH_MAX_RESULTS) break;
    if (matches >= SEARCH_MAX_RESULTS && scanned >= plan.minWindow) break;
    // The rest of the window cannot fill the page even at a generous density (3 more matches than
    // seen, about a 95% Poisson bound when none were): the terms are rarer together than the statistics
    // said ("kit tool": two name suffixes that exclude each other, 0 of 12k rows). The caller then
    // answers from the index query, so reading the rest of the window would be wasted.
    if (exactFallback && matches + ((matches + 3) / scanned) * (last - scanned) < SEARCH_MAX_RESULTS) break;
    const seen = matches / scanned;
    // 25% over the density seen, so that a round rarely falls a few matches short of the page.
    const forPage =
      matches >= SEARCH_MAX_RESULTS
        ? 0
        : seen > 0
          ? Math.ceil(((SEARCH_MAX_RESULTS - matches) / seen) * 1.25)
          : Number.POSITIVE_INFINITY;
    const next = scanned + Math.max(plan.minWindow - scanned, forPage, 1);
    through = Number.isFinite(next) ? endFor(next) : last;
  }
  top.sort((a, b) => a.tier - b.tier || a.ord - b.ord);
  const rows = top.slice(0, SEARCH_MAX_RESULTS).flatMap((m) => m.row ?? []);
  const exact = scanned >= docs || scanned === 0;
  return { rows, total: exact ? matches : Math.round((matches / scanned) * docs), exact, matches };
}

/**
 * Another term starts with term `i` (`da` beside `data`): it adds next to nothing to the longer one's
 * postings, so the index query and the posting plan leave it to the re-check.
 */
function extendedByAnother(lexemes: string[], i: number): boolean {
  const lexeme = lexemes[i] ?? '';
  return lexemes.some((other, j) => j !== i && other.startsWith(lexeme));
}

/**
 * A term's keys for the posting plan, or null when the plan cannot answer the query: a term of one
 * character (no key), or a key without blocks (a term that rare makes the selective plan the choice).
 * Name keys: the term itself up to SEARCH_KEY_LENGTH characters (a stored key is exactly a prefix);
 * beyond, the stored lexemes it expands to when narrow, else its first SEARCH_KEY_LENGTH characters.
 * A term that another term extends is left to the re-check, as in the index query.
 */
function postingTerms(lexemes: string[], stats: PrefixStats[], plan: SearchPlanOptions): TermKeys[] | null {
  const terms: TermKeys[] = [];
  for (const [i, lexeme] of lexemes.entries()) {
    const stat = stats[i];
    if (!stat) return null;
    if (extendedByAnother(lexemes, i)) continue;
    if (lexeme.length === 1) {
      // No block key holds every lexeme that starts with one character: the blocks leave it to the
      // re-check, and its name key (the rebuild stores every name and scope word's first character)
      // gives its name positions exactly. Tables from a rebuild before that have neither the key nor
      // the prefix's statistics: the scan plan answers until the next rebuild.
      if (!stat.counted) return null;
      terms.push({ name: [lexeme], nameExact: true, block: [], postings: Number.POSITIVE_INFINITY });
      continue;
    }
    if (!stat.keys) return null;
    // A narrow term's own lexemes when they all have blocks and its keys have none, or reach far more
    // packages (`helper` beside `help`, which every "helps" holds): fewer candidates to re-check.
    const ownLexemes = stat.lexemesBlocked && (!stat.blocked || stat.docs * 2 < stat.keyDocs);
    if (!ownLexemes && !stat.blocked) return null;
    const name =
      lexeme.length <= SEARCH_KEY_LENGTH
        ? [lexeme]
        : stat.expansions <= plan.maxExpansions
          ? stat.lexemes.filter((stored) => stored.startsWith(lexeme))
          : [lexeme.slice(0, SEARCH_KEY_LENGTH)];
    const nameExact = lexeme.length <= SEARCH_KEY_LENGTH || stat.expansions <= plan.maxExpansions;
    terms.push({
      name,
      nameExact,
      block: ownLexemes ? stat.lexemes : stat.keys,
      postings: ownLexemes ? stat.docs : stat.keyDocs,
    });
  }
  // Rarest first: the intersections stop reading once they are empty.
  terms.sort((a, b) => a.postings - b.postings);
  // Some term must have blocks: one-character terms alone are the scan plan's ("a b").
  return terms.some((term) => term.block.length > 0) ? terms : null;
}

/**
 * Posting plan (docs/decisions.md, "Registry search"): exact ranking from the posting tables, at a cost
 * that follows the page. Name phase: the positions whose name + scope hold every term, re-checked in
 * ranking order, in chunks, until 50 all-in-name matches are in hand (then they are the page) or every
 * candidate was checked (then every tier 0 and 1 match is known). Block phase, in the same rounds: the
 * blocks' intersections, read in ranking order from a cursor, re-checked, until the page's remaining
 * places are taken by tier-2 matches ranked before anything unread, or the blocks end (then the page and
 * `total` are exact without the rest of the name phase; otherwise `total` is extrapolated from the
 * positions read).
 */
async function searchPostings(
  db: Db,
  lexemes: string[],
  terms: TermKeys[],
  plan: SearchPlanOptions,
  docs: number,
  expectedCandidates: number,
): Promise<{ rows: SearchRow[]; total: number }> {
  const page = SEARCH_MAX_RESULTS;
  const lastBlock = docs >> plan.blockShift;
  const found = new Map<number, RankedMatch>();
  const keep = (top: RankedMatch[]) => {
    for (const match of top) found.set(match.ord, match);
  };
  // Name phase: the next position (1-based) of the intersection, its size (once known), and what the
  // chunks checked so far held.
  let nameNext = 1;
  let nameCandidates = Number.POSITIVE_INFINITY;
  let nameTier0 = 0;
  let nameTier01 = 0;
  let nameCount = plan.nameChunk;
  // Block phase: a cursor (block, offset into its intersection), each block's intersection size once
  // read, and what the positions before the cursor held.
  let block = 0;
  let offset = 0;
  const sizes: number[] = [];
  let blockCount = 0;
  let blocksPerRound = plan.firstRoundBlocks;
  let checked = 0;
  let blockMatchCount = 0;
  let blockTier0 = 0;
  let blockTier2 = 0;
  let lastOrd = 0;
  // A name statement still running (the block phase goes on meanwhile), and its error if it failed.
  let names: Promise<void> | undefined;
  let namesFailed: { error: unknown } | undefined;
  const runNames = (statement: Promise<void>) => {
    // Never rejects: its error is thrown where the loop waits (a rejection nobody awaits yet would be
    // an unhandled one while a block chunk runs).
    names = statement.then(
      () => {
        names = undefined;
      },
      (error: unknown) => {
        names = undefined;
        namesFailed = { error };
      },
    );
  };
  for (;;) {
    // 50 all-in-name matches among the positions read in order (names, or blocks: every match before
    // the cursor was read) are the page.
    // Once the blocks are read to the end, every match was ranked by some chunk, and each chunk kept
    // its best 50: the page is known whatever the name phase did not check.
    const settled = nameTier0 >= page || blockTier0 >= page || block > lastBlock;
    // One term: its all-in-name matches are usually dense among the first blocks' positions, which then
    // settle the page alone; the name phase (a whole list: ~600 KB for a head word) waits a round.
    const namesOpen =
      !names && !settled && nameNext <= nameCandidates && (terms.length > 1 || blockCount > 0);
    const need = page - nameTier01 - blockTier2;
    // After the first chunk, blocks go on only while a name statement runs (usually the longer one), one
    // chunk at a time, sized by what tiers 0 and 1 are known to hold so far: the name phase may still
    // settle the page alone, but reading ahead in ranking order never changes the page, it only costs,
    // and it costs no time while the names are the slower. When no name statement runs and the name
    // phase is not over, its next chunk starts first.
    const blocksOpen =
      !settled && need > 0 && (blockCount === 0 || nameNext > nameCandidates || names !== undefined);
    if (!namesOpen && !blocksOpen) {
      if (!names) break;
      await names;
      if (namesFailed) throw namesFailed.error;
      continue;
    }
    let blocks: Promise<void> | undefined;
    if (namesOpen && terms.every((term) => term.nameExact)) {
      // Exact name keys: tiers 0 and 1 in one statement, the name phase done.
      runNames(
        nameTiers(db, terms, page).then((tiers) => {
          keep(tiers.top);
          nameCandidates = tiers.tier01;
          nameNext = tiers.tier01 + 1;
          nameTier0 = tiers.tier0;
          nameTier01 = tiers.tier01;
        }),
      );
    } else if (namesOpen) {
      const from = nameNext;
      const count = nameCount;
      runNames(
        nameMatches(db, lexemes, terms, from, count, page).then((chunk) => {
          keep(chunk.top);
          nameCandidates = chunk.scalars.candidates;
          nameNext = from + count;
          nameTier0 += chunk.tier0;
          nameTier01 += chunk.matches - chunk.tier2;
        }),
      );
      nameCount = Math.min(nameCount * 4, plan.maxChunk);
    }
    if (blocksOpen) {
      // Enough blocks for the chunk at the density known (the blocks read so far, else the statistics).
      const known = sizes.length > 0 ? sizes.reduce((a, b) => a + b, 0) / sizes.length : 0;
      const perBlock = Math.max(1, known || expectedCandidates / (lastBlock + 1));
      // The chunk: enough for the places left at the tier-2 density seen (+25%), else 4x the last.
      blockCount =
        blockCount === 0
          ? plan.blockChunk
          : Math.min(
              plan.maxChunk,
              blockTier2 > 0 ? Math.ceil((need / (blockTier2 / checked)) * 1.25) : blockCount * 4,
            );
      const count = blockCount;
      const ahead = Math.ceil((count + offset) / perBlock);
      const first = block;
      const through = Math.min(lastBlock, first + Math.min(blocksPerRound, ahead) - 1);
      blocksPerRound *= 4;
      const skip = offset;
      blocks = blockMatches(db, lexemes, terms, first, through, skip, count, page).then((chunk) => {
        keep(chunk.top);
        const { block_sizes: got, checked: n, last_ord: last } = chunk.scalars;
        got.forEach((size, i) => {
          sizes[first + i] = size;
        });
        checked += n;
        blockMatchCount += chunk.matches;
        blockTier0 += chunk.tier0;
        blockTier2 += chunk.tier2;
        if (last !== null) lastOrd = last;
        // Move the cursor past the n positions read, block by block.
        let rest = n;
        let at = first;
        let into = skip;
        while (at <= through) {
          const available = (got[at - first] ?? 0) - into;
          if (rest < available) break;
          rest -= available;
          at += 1;
          into = 0;
        }
        block = at;
        offset = at <= through ? into + rest : 0;
      });
    }
    // The block chunk when there is one (a name statement started with it goes on), else the names.
    await (blocks ?? names);
    if (namesFailed) throw namesFailed.error;
  }
  const ranked = [...found.values()].sort((a, b) => a.tier - b.tier || a.ord - b.ord);
  const rows = ranked.slice(0, page).flatMap((m) => m.row ?? []);
  if (block > lastBlock) return { rows, total: blockMatchCount };
  // Positions before the cursor were all read: up to the block's start, or to the last one re-checked.
  const covered = Math.min(docs, offset === 0 ? (block << plan.blockShift) - 1 : lastOrd);
  const estimate = covered > 0 ? Math.round((blockMatchCount / covered) * docs) : 0;
  return { rows, total: Math.max(estimate, found.size, nameTier01) };
}

/**
 * The selective plan's index query over pkgreg_search_keys. A narrow term is an OR of its exact
 * lexemes, a broad one its prefix keys, one unknown to the statistics a prefix operand (rare by
 * definition). A term that another term extends (`da` beside `data`) adds next to nothing to the longer
 * one and is left to the re-check; so is a broad term with no prefix key (one character).
 * The GIN scan decodes every posting list of the query, so terms join it rarest first, and once the
 * candidates are few enough for the selective plan, a further term joins only if its postings cost less
 * than the candidates it removes (`postingsPerCandidate`): a key in every package ("skill" in these
 * descriptions) is a million postings that remove nothing. The re-check still applies every term.
 * `candidates`: rows the index query is expected to leave, terms assumed independent; `matches`: the
 * same over every term (the broad plan sizes its first slice by it). `complete`: every term is in the
 * index query, so its candidates are (about) the matches themselves; `exactCandidates`: exactly them,
 * as no term went in as prefix keys (searchSelective then skips the re-check).
 */
function planIndexQuery(
  lexemes: string[],
  stats: PrefixStats[],
  docs: number,
  plan: SearchPlanOptions,
): {
  indexQuery: string;
  candidates: number;
  complete: boolean;
  exactCandidates: boolean;
  matches: number;
  postings: number;
} {
  const total = Math.max(docs, 1);
  // `exact`: the operand matches only packages that match the term (narrow lexemes, and the keys they
  // reach, all start with the term or its stem); a prefix key reaches other words too.
  const terms: Array<{ operand: string; postings: number; exact: boolean }> = [];
  let matches = total;
  let complete = true;
  lexemes.forEach((lexeme, i) => {
    const stat = stats[i];
    if (!stat || extendedByAnother(lexemes, i)) return;
    matches *= Math.min(1, stat.docs / total);
    if (stat.expansions === 0) {
      terms.push({ operand: prefixOperand(lexeme), postings: 0, exact: true });
    } else if (stat.expansions <= plan.maxExpansions) {
      terms.push({
        operand: `(${stat.lexemes.map(exactOperand).join(' | ')})`,
        postings: stat.docs,
        exact: true,
      });
    } else if (stat.keys && stat.keys.length > 0) {
      terms.push({
        operand: `(${stat.keys.map(exactOperand).join(' | ')})`,
        postings: stat.keyDocs,
        exact: false,
      });
    } else {
      complete = false;
    }
  });
  terms.sort((a, b) => a.postings - b.postings);
  const operands: string[] = [];
  let postings = 0;
  let candidates = total;
  let exactCandidates = complete;
  for (const term of terms) {
    const kept = Math.min(1, term.postings / total);
    const worth = term.postings < plan.postingsPerCandidate * candidates * (1 - kept);
    if (operands.length > 0 && candidates <= plan.selectiveMaxDocs && !worth) {
      complete = false;
      exactCandidates = false;
      continue;
    }
    exactCandidates &&= term.exact;
    operands.push(term.operand);
    postings += term.postings;
    candidates *= kept;
  }
  return { indexQuery: operands.join(' & '), candidates, complete, exactCandidates, matches, postings };
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
  const { indexQuery, candidates, complete, exactCandidates, matches, postings } = planIndexQuery(
    lexemes,
    stats,
    docs,
    plan,
  );
  let answer: { rows: SearchRow[]; total: number };
  const terms = plan.postingPlan ? postingTerms(lexemes, stats, plan) : null;
  // The GIN scan decodes every posting of the index query, and each candidate costs a row read and
  // re-checked: past `selectiveMaxPostings` postings or `selectiveMaxDocsBesidePostings` candidates, the
  // posting plan's few blocks cost less.
  const selective =
    indexQuery &&
    candidates <= plan.selectiveMaxDocs &&
    (!terms || (postings <= plan.selectiveMaxPostings && candidates <= plan.selectiveMaxDocsBesidePostings));
  if (selective) {
    answer = await searchSelective(db, lexemes, indexQuery, SEARCH_MAX_RESULTS, !exactCandidates);
  } else if (terms) {
    answer = await searchPostings(db, lexemes, terms, plan, docs, matches);
  } else {
    const exactFallback = Boolean(indexQuery) && complete;
    const broad = await searchBroad(db, lexemes, plan, docs, matches, exactFallback);
    // Fewer matches than a page in the rows read although the statistics promised more: the terms are
    // rarer together than apart, and the rest may rank past those rows. When every term is in the index
    // query its candidates are those few matches, so the index finds them all. (Counted as matches, not
    // rows: a page one short for a delisting since the rebuild must not send 500k candidates there.)
    answer =
      !broad.exact && broad.matches < SEARCH_MAX_RESULTS && exactFallback
        ? await searchSelective(db, lexemes, indexQuery, SEARCH_MAX_RESULTS, !exactCandidates)
        : broad;
  }
  return { results: answer.rows.map(toResult), total: answer.total };
}
