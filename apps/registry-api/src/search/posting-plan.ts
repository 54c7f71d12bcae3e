import { SEARCH_MAX_RESULTS } from '@pkgreg/contracts';
import type { Db } from '@pkgreg/db';
import type { FacetOperand } from './facets.repository.js';
import { PostingCursor } from './posting-cursor.js';
import {
  blockMatches,
  filterMatches,
  nameMatches,
  nameTiers,
  type TermKeys,
} from './posting-plan.repository.js';
import type { SearchPlanOptions } from './search-planner.js';
import { hiddenAmong, rowsOf } from './search-ranking.js';
import type { SearchPage } from './search-sql.js';

/**
 * A name statement left running while block chunks go on. Its promise never rejects: the error is
 * thrown where the loop waits, since a rejection nobody awaits yet would be an unhandled one while a
 * block chunk runs.
 */
class RunningNames {
  promise: Promise<void> | undefined;
  private failed: { error: unknown } | undefined;

  get running(): boolean {
    return this.promise !== undefined;
  }

  start(statement: Promise<void>): void {
    this.promise = statement.then(
      () => {
        this.promise = undefined;
      },
      (error: unknown) => {
        this.promise = undefined;
        this.failed = { error };
      },
    );
  }

  throwIfFailed(): void {
    if (this.failed) throw this.failed.error;
  }
}

/** Starts the name phase's next statement: the tiers as sets when the name keys are exact, else a chunk. */
function startNames(
  db: Db,
  lexemes: string[],
  terms: TermKeys[],
  facets: FacetOperand[],
  cursor: PostingCursor,
): Promise<void> {
  if (cursor.namesExact) {
    return nameTiers(db, terms, facets, SEARCH_MAX_RESULTS).then((tiers) => cursor.takeNameTiers(tiers));
  }
  const range = cursor.nextNameRange();
  return nameMatches(db, lexemes, terms, facets, range.from, range.count, SEARCH_MAX_RESULTS).then((chunk) =>
    cursor.takeNameChunk(range, chunk),
  );
}

/**
 * Posting plan: exact ranking from the posting tables, at a cost that follows the page. The name phase
 * (positions whose name + scope hold every term) and the block phase (every term's positions, block by
 * block) both read in ranking order, on two connections at once, until the cursor says the page is
 * known. Filters (`facets`) narrow both phases' positions before the re-check.
 */
export async function postingPlan(
  db: Db,
  lexemes: string[],
  terms: TermKeys[],
  facets: FacetOperand[],
  plan: SearchPlanOptions,
  docs: number,
  expectedMatches: number,
): Promise<SearchPage> {
  const cursor = new PostingCursor(terms, plan, docs, expectedMatches);
  const names = new RunningNames();
  for (;;) {
    const namesOpen = cursor.namesOpen(names.running);
    const blocksOpen = cursor.blocksOpen(names.running);
    if (!namesOpen && !blocksOpen) {
      if (!names.promise) break;
      await names.promise;
      names.throwIfFailed();
      continue;
    }
    if (namesOpen) names.start(startNames(db, lexemes, terms, facets, cursor));
    let blocks: Promise<void> | undefined;
    if (blocksOpen) {
      const range = cursor.nextBlockRange();
      blocks = blockMatches(db, lexemes, terms, facets, range, SEARCH_MAX_RESULTS, plan.blockShift).then(
        (chunk) => cursor.takeBlockChunk(range, chunk),
      );
    }
    // The block chunk when there is one (a name statement started with it goes on), else the names.
    await (blocks ?? names.promise);
    names.throwIfFailed();
  }
  return cursor.answer();
}

/**
 * Filter plan: the packages passing every filter (the facets' whole lists) are the candidates; each is
 * re-checked against every term and ranked. Exact, total included; its cost follows the packages the
 * filters leave, so it answers when they are few (a scope, a rare tag).
 */
export async function filterPlan(db: Db, lexemes: string[], facets: FacetOperand[]): Promise<SearchPage> {
  const chunk = await filterMatches(db, lexemes, facets, SEARCH_MAX_RESULTS);
  return { rows: rowsOf(chunk.top), total: chunk.matches - hiddenAmong(chunk.top) };
}
