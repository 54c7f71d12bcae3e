import { type FacetOperand, facetSelectivity } from './facets.repository.js';
import type { TermKeys } from './posting-plan.repository.js';
import type { PrefixStats } from './search-statistics.repository.js';
import { SEARCH_BLOCK_SHIFT, SEARCH_KEY_LENGTH } from './search-tables.repository.js';
import { exactOperand, prefixOperand } from './search-terms.js';

/** The plan choice's bounds and each plan's cost constants; tests shrink them to reach every path. */
export interface SearchPlanOptions {
  /** A prefix that expands to at most this many stored lexemes is narrow: an OR of those lexemes. */
  maxExpansions: number;
  /** Most candidates the selective plan ranks: each is a packages row read and re-checked. */
  selectiveMaxDocs: number;
  /** The scan's slices of package_search_docs, in rows: a round ends on a slice boundary. */
  slices: number[];
  /** Rows the scan reads before it settles for a page that is not all name matches. */
  minWindow: number;
  /**
   * Matches the scan's first slice aims to hold, by the statistics' density: a common term's name
   * matches are among its first rows. Capped by slices[0]; when smaller, slices[0] and the rest follow.
   */
  firstSliceMatches: number;
  /** Smallest first slice: the statistics over-count, and a second slice costs a round trip. */
  minFirstSlice: number;
  /** What one selective candidate costs in GIN postings decoded: a heap page and a re-check each. */
  postingsPerCandidate: number;
  /** Runs a round of slices is read in at once, one pool connection each. */
  parallel: number;
  /** Smallest run worth its own statement, whose fixed cost would outweigh its rows. */
  minChunk: number;
  /** Positions per block as log2: what package_search_blocks was rebuilt with. */
  blockShift: number;
  /** Name candidates the posting plan's first round re-checks (then 4x per round). */
  nameChunk: number;
  /** Block positions the posting plan's first round re-checks. */
  blockChunk: number;
  /** Most positions one chunk re-checks. */
  maxChunk: number;
  /** Most blocks the first round intersects (four times as many each round after). */
  firstRoundBlocks: number;
  /** Most GIN postings a selective plan may decode when the posting plan could answer instead. */
  selectiveMaxPostings: number;
  /**
   * Most candidates a selective plan may rank when the posting plan could answer instead: the selective
   * plan's cost follows its candidates, the posting plan's the page.
   */
  selectiveMaxDocsBesidePostings: number;
  /** Off: the posting plan is never taken (tests compare the others against it). */
  postingPlan: boolean;
  /**
   * The scan takes rows through package_search_initials when the statistics expect at most this share
   * of rows to match: each row let through costs a probe of package_search_docs, dearer than the plain
   * scan's test of a row when most rows pass.
   */
  initialsMaxDensity: number;
  /**
   * Most packages the filters may be expected to leave for the filter plan, which re-checks each of
   * them (a position of package_search_docs) against the terms.
   */
  filterMaxDocs: number;
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
  filterMaxDocs: 3000,
};

/** The selective plan's index query, and whether its candidates need the re-check. */
export interface IndexQuery {
  indexQuery: string;
  recheck: boolean;
}

/** The plan a query takes, with what that plan needs from planning. */
export type PlanChoice =
  | ({ plan: 'selective' } & IndexQuery)
  | { plan: 'filter' }
  | { plan: 'posting'; terms: TermKeys[]; expectedMatches: number }
  | {
      plan: 'scan';
      expectedMatches: number;
      /** The index query holds every term: it answers exactly when the scan finds less than a page. */
      exactFallback: IndexQuery | null;
    };

/**
 * With filters, the filter plan when they are expected to leave few packages (fewer than the selective
 * plan's candidates, when it would answer). Otherwise selective when the index query is expected to
 * leave few candidates, unless the posting plan can answer and the GIN scan's postings or the
 * candidates cost more than its blocks; else posting when every term has keys with blocks; else the
 * scan. Filters narrow what the posting plan and the scan read, and their expected matches.
 */
export function choosePlan(
  lexemes: string[],
  stats: PrefixStats[],
  docs: number,
  plan: SearchPlanOptions,
  facets: FacetOperand[] = [],
): PlanChoice {
  const { indexQuery, candidates, complete, exactCandidates, matches, postings } = planIndexQuery(
    lexemes,
    stats,
    docs,
    plan,
  );
  const terms = plan.postingPlan ? postingTerms(lexemes, stats, plan) : null;
  const index = { indexQuery, recheck: !exactCandidates };
  const selective =
    indexQuery &&
    candidates <= plan.selectiveMaxDocs &&
    (!terms || (postings <= plan.selectiveMaxPostings && candidates <= plan.selectiveMaxDocsBesidePostings));
  const share = facetSelectivity(facets, docs);
  const filtered = docs * share;
  if (facets.length > 0 && filtered <= plan.filterMaxDocs && !(selective && candidates < filtered)) {
    return { plan: 'filter' };
  }
  if (selective) return { plan: 'selective', ...index };
  const expectedMatches = matches * share;
  if (terms) return { plan: 'posting', terms, expectedMatches };
  return { plan: 'scan', expectedMatches, exactFallback: indexQuery && complete ? index : null };
}

/**
 * Another term starts with term `i` (`da` beside `data`): it adds next to nothing to the longer one's
 * postings, so the index query and the posting plan leave it to the re-check.
 */
function extendedByAnother(lexemes: string[], i: number): boolean {
  const lexeme = lexemes[i] ?? '';
  return lexemes.some((other, j) => j !== i && other.startsWith(lexeme));
}

/** The selective plan's index query, and what the statistics expect of it. */
interface IndexQueryPlan {
  indexQuery: string;
  /** Rows the index query is expected to leave, terms assumed independent. */
  candidates: number;
  /** Every term is in the index query, so its candidates are about the matches. */
  complete: boolean;
  /** Complete, and no term went in as prefix keys: the candidates are exactly the matches. */
  exactCandidates: boolean;
  /** Matches expected over every term (the scan sizes its first slice by them). */
  matches: number;
  /** GIN postings the index query decodes. */
  postings: number;
}

/**
 * The selective plan's index query over pkgreg_search_keys, terms rarest first. The GIN scan decodes
 * every posting list it is given, so once the candidates are few a further term joins only if its
 * postings cost less than the candidates it removes; the re-check still applies every term.
 */
function planIndexQuery(
  lexemes: string[],
  stats: PrefixStats[],
  docs: number,
  plan: SearchPlanOptions,
): IndexQueryPlan {
  const total = Math.max(docs, 1);
  // `exact`: the operand matches only packages that match the term (narrow lexemes, and the keys they
  // reach, all start with the term or its stem); a prefix key reaches other words too.
  const terms: Array<{ operand: string; postings: number; exact: boolean }> = [];
  let matches = total;
  let complete = true;
  // A narrow term is an OR of its stored lexemes, a broad one its prefix keys, one the statistics do not
  // know a prefix operand (a word newer than them, rare by definition); a broad one without keys (one
  // character) is left out.
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

/**
 * Each term's keys for the posting plan, rarest first, or null when the plan cannot answer: a key
 * without blocks (a term that rare makes the selective plan the choice), or one-character terms only.
 * Name keys: the term itself up to SEARCH_KEY_LENGTH characters (a stored key is exactly a prefix);
 * beyond, the stored lexemes it expands to when narrow, else its first SEARCH_KEY_LENGTH characters.
 */
function postingTerms(lexemes: string[], stats: PrefixStats[], plan: SearchPlanOptions): TermKeys[] | null {
  const terms: TermKeys[] = [];
  for (const [i, lexeme] of lexemes.entries()) {
    const stat = stats[i];
    if (!stat) return null;
    if (extendedByAnother(lexemes, i)) continue;
    if (lexeme.length === 1) {
      // No block key holds every lexeme that starts with one character: the blocks leave it to the
      // re-check, and its name key gives its name positions exactly. Tables from a rebuild before
      // first-character keys have neither the key nor the prefix's statistics: the scan answers.
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
  // Some term must have blocks: one-character terms alone are the scan's ("a b").
  return terms.some((term) => term.block.length > 0) ? terms : null;
}
