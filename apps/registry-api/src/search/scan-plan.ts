import { SEARCH_MAX_RESULTS } from '@pkgreg/contracts';
import type { Db } from '@pkgreg/db';
import type { FacetOperand } from './facets.repository.js';
import { matchesInSlice, type SliceMatches } from './scan-plan.repository.js';
import type { SearchPlanOptions } from './search-planner.js';
import { byRank, hiddenAmong, type RankedMatch, rowsOf } from './search-ranking.js';
import type { SearchPage } from './search-sql.js';
import { initialsMask } from './search-terms.js';

/** What the scan answers: `exact` when it read the whole table, and the matches it read. */
export interface ScanPage extends SearchPage {
  exact: boolean;
  matches: number;
}

/** Splits positions after..through into `parts` runs of at least `minRows` rows (fewer runs when short). */
function chunks(after: number, through: number, parts: number, minRows: number): Array<[number, number]> {
  const count = Math.max(1, Math.min(parts, Math.floor((through - after) / Math.max(minRows, 1))));
  const size = Math.ceil((through - after) / count);
  const runs: Array<[number, number]> = [];
  for (let from = after; from < through; from += size) runs.push([from, Math.min(through, from + size)]);
  return runs;
}

/**
 * Where a round may end (after each slice, capped by the table), and where the first one ends: the
 * first slice, or, when even slices[0] is expected to hold fewer than firstSliceMatches, every slice up
 * to minWindow (unless 50 name matches turn up, the rounds would read them all anyway).
 */
function scanWindow(
  plan: SearchPlanOptions,
  docs: number,
  density: number,
): { ends: number[]; first: number } {
  const [planned = 0] = plan.slices;
  const wanted = Math.ceil(plan.firstSliceMatches / density);
  const firstSlice = Math.min(planned, Math.max(plan.minFirstSlice, wanted));
  const sizes = firstSlice < planned ? [firstSlice, ...plan.slices] : plan.slices;
  const ends: number[] = [];
  for (const size of sizes) ends.push(Math.min(docs, (ends.at(-1) ?? 0) + size));
  let first = ends[0] ?? 0;
  if (wanted > planned) for (const end of ends) if (end <= plan.minWindow) first = Math.max(first, end);
  return { ends, first };
}

/** One round: its rows in up to `parallel` runs at once, one connection each, so it takes the longest run's time. */
async function readRound(
  db: Db,
  lexemes: string[],
  plan: SearchPlanOptions,
  after: number,
  through: number,
  initials: bigint | null,
  facets: FacetOperand[],
): Promise<SliceMatches[]> {
  return Promise.all(
    chunks(after, through, plan.parallel, plan.minChunk).map(([from, to]) =>
      matchesInSlice(db, lexemes, from + 1, to, SEARCH_MAX_RESULTS, initials, facets, plan.blockShift),
    ),
  );
}

/**
 * Scan plan: package_search_docs read in ranking order, in rounds, until the page is certain (50 name
 * matches, or the table's end) or at the latest until 50 matches are in hand and minWindow rows were
 * read; `total` is then extrapolated from the rows read. `exactFallback`: the caller can answer exactly
 * from the index query when the page stays short.
 */
export async function scanPlan(
  db: Db,
  lexemes: string[],
  plan: SearchPlanOptions,
  docs: number,
  expectedMatches: number,
  exactFallback: boolean,
  /** The filters' facets: rows outside their lists are not read (expectedMatches counts them in). */
  facets: FacetOperand[] = [],
): Promise<ScanPage> {
  const top: RankedMatch[] = [];
  let matches = 0;
  let nameMatches = 0;
  let scanned = 0;
  const density = Math.max(expectedMatches, 1) / Math.max(docs, 1);
  const initials = density <= plan.initialsMaxDensity ? initialsMask(lexemes) : null;
  const { ends, first } = scanWindow(plan, docs, density);
  const last = ends.at(-1) ?? 0;
  let through = first;
  while (through > scanned) {
    for (const slice of await readRound(db, lexemes, plan, scanned, through, initials, facets)) {
      top.push(...slice.top);
      matches += slice.matches;
      nameMatches += slice.nameMatches;
    }
    scanned = through;
    if (scanned >= docs || nameMatches >= SEARCH_MAX_RESULTS) break;
    if (matches >= SEARCH_MAX_RESULTS && scanned >= plan.minWindow) break;
    // The rest of the window cannot fill the page even at a generous density (3 more matches than seen,
    // about a 95% Poisson bound when none were): the terms are rarer together than the statistics said,
    // and the index query will answer, so reading on would be wasted.
    if (exactFallback && matches + ((matches + 3) / scanned) * (last - scanned) < SEARCH_MAX_RESULTS) break;
    // The next round reads what the rows seen say is still needed: the rest of minWindow while name
    // matches are short, or enough for the page at the density seen plus 25%, so a round rarely falls a
    // few matches short.
    const seen = matches / scanned;
    const forPage =
      matches >= SEARCH_MAX_RESULTS
        ? 0
        : seen > 0
          ? Math.ceil(((SEARCH_MAX_RESULTS - matches) / seen) * 1.25)
          : Number.POSITIVE_INFINITY;
    const next = scanned + Math.max(plan.minWindow - scanned, forPage, 1);
    through = Number.isFinite(next) ? (ends.find((end) => end >= next) ?? last) : last;
  }
  top.sort(byRank);
  const rows = rowsOf(top.slice(0, SEARCH_MAX_RESULTS));
  const exact = scanned >= docs || scanned === 0;
  const shown = matches - hiddenAmong(top);
  return { rows, total: exact ? shown : Math.round((shown / scanned) * docs), exact, matches };
}
