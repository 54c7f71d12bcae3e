import { SEARCH_MAX_RESULTS } from '@pkgreg/contracts';
import type { BlockRange, RankedChunk, TermKeys } from './posting-plan.repository.js';
import type { SearchPlanOptions } from './search-planner.js';
import { byRank, hiddenAmong, type RankedMatch, rowsOf } from './search-ranking.js';
import type { SearchPage } from './search-sql.js';

const PAGE = SEARCH_MAX_RESULTS;

/** A name chunk: `count` candidates of the name intersection from the `from`-th (1-based). */
export interface NameRange {
  from: number;
  count: number;
}

/**
 * The posting plan's state: what its name phase and block phase have read so far, and where each goes
 * on. The plan's loop asks it what to read next and hands it each statement's answer.
 */
export class PostingCursor {
  /** Every match some chunk ranked, by position: a match read by both phases counts once. */
  private readonly found = new Map<number, RankedMatch>();
  private readonly lastBlock: number;

  // Name phase: the next position of the intersection, its size once known, and what the chunks read
  // so far held.
  private nameNext = 1;
  private nameCandidates = Number.POSITIVE_INFINITY;
  private nameTier0 = 0;
  private nameTier01 = 0;
  private nameCount: number;

  // Block phase: the cursor (a block, an offset into its intersection), each block's intersection size
  // once read, and what the positions before the cursor held.
  private block = 0;
  private offset = 0;
  private readonly sizes: number[] = [];
  private blockCount = 0;
  private blocksPerRound: number;
  private checked = 0;
  private blockMatches = 0;
  private blockTier0 = 0;
  private blockTier2 = 0;
  private lastOrd = 0;

  constructor(
    private readonly terms: TermKeys[],
    private readonly plan: SearchPlanOptions,
    private readonly docs: number,
    private readonly expectedMatches: number,
  ) {
    this.lastBlock = docs >> plan.blockShift;
    this.nameCount = plan.nameChunk;
    this.blocksPerRound = plan.firstRoundBlocks;
  }

  /**
   * The page is known: 50 all-in-name matches among positions read in order (names, or blocks: every
   * match before the cursor was read), or the blocks read to the end (every match was ranked by some
   * chunk, and each chunk kept its best 50).
   */
  private get settled(): boolean {
    return this.nameTier0 >= PAGE || this.blockTier0 >= PAGE || this.block > this.lastBlock;
  }

  private get namesDone(): boolean {
    return this.nameNext > this.nameCandidates;
  }

  /** Places of the page not yet taken by tier 0/1 matches or by tier-2 matches before the cursor. */
  private get placesLeft(): number {
    return PAGE - this.nameTier01 - this.blockTier2;
  }

  /**
   * Whether a name statement should start. With one term, its all-in-name matches are usually dense
   * among the first blocks' positions, which then settle the page alone: the name phase (a whole list
   * for a head word) waits a round.
   */
  namesOpen(namesRunning: boolean): boolean {
    return (
      !namesRunning && !this.settled && !this.namesDone && (this.terms.length > 1 || this.blockCount > 0)
    );
  }

  /**
   * Whether a block chunk should start. After the first, blocks go on only while a name statement runs
   * (one chunk at a time) or once the name phase is over: the name phase may still settle the page
   * alone, and reading ahead in ranking order never changes the page, it only costs, and costs no time
   * while the names are the slower.
   */
  blocksOpen(namesRunning: boolean): boolean {
    return !this.settled && this.placesLeft > 0 && (this.blockCount === 0 || this.namesDone || namesRunning);
  }

  /** Every term's name keys are exact: tiers 0 and 1 come as sets in one statement. */
  get namesExact(): boolean {
    return this.terms.every((term) => term.nameExact);
  }

  takeNameTiers(tiers: { top: RankedMatch[]; tier0: number; tier01: number }): void {
    this.keep(tiers.top);
    this.nameCandidates = tiers.tier01;
    this.nameNext = tiers.tier01 + 1;
    this.nameTier0 = tiers.tier0;
    this.nameTier01 = tiers.tier01;
  }

  /** The next name chunk; each is four times the last, up to maxChunk. */
  nextNameRange(): NameRange {
    const range = { from: this.nameNext, count: this.nameCount };
    this.nameCount = Math.min(this.nameCount * 4, this.plan.maxChunk);
    return range;
  }

  takeNameChunk({ from, count }: NameRange, chunk: RankedChunk<{ candidates: number }>): void {
    this.keep(chunk.top);
    this.nameCandidates = chunk.scalars.candidates;
    this.nameNext = from + count;
    this.nameTier0 += chunk.tier0;
    this.nameTier01 += chunk.matches - chunk.tier2;
  }

  /**
   * The next block chunk: enough positions for the places left at the tier-2 density seen (+25%), else
   * four times the last, and enough blocks for them at the density known (the blocks read so far, else
   * the statistics).
   */
  nextBlockRange(): BlockRange {
    const { plan, sizes } = this;
    const known = sizes.length > 0 ? sizes.reduce((a, b) => a + b, 0) / sizes.length : 0;
    const perBlock = Math.max(1, known || this.expectedMatches / (this.lastBlock + 1));
    this.blockCount =
      this.blockCount === 0
        ? plan.blockChunk
        : Math.min(
            plan.maxChunk,
            this.blockTier2 > 0
              ? Math.ceil((this.placesLeft / (this.blockTier2 / this.checked)) * 1.25)
              : this.blockCount * 4,
          );
    const count = this.blockCount;
    const ahead = Math.ceil((count + this.offset) / perBlock);
    const first = this.block;
    const through = Math.min(this.lastBlock, first + Math.min(this.blocksPerRound, ahead) - 1);
    this.blocksPerRound *= 4;
    return { first, through, skip: this.offset, count };
  }

  takeBlockChunk(
    { first, through, skip }: BlockRange,
    chunk: RankedChunk<{ block_sizes: number[]; checked: number; last_ord: number | null }>,
  ): void {
    this.keep(chunk.top);
    const { block_sizes: got, checked: n, last_ord: last } = chunk.scalars;
    got.forEach((size, i) => {
      this.sizes[first + i] = size;
    });
    this.checked += n;
    this.blockMatches += chunk.matches;
    this.blockTier0 += chunk.tier0;
    this.blockTier2 += chunk.tier2;
    if (last !== null) this.lastOrd = last;
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
    this.block = at;
    this.offset = at <= through ? into + rest : 0;
  }

  /**
   * The page: exactly the top 50 by (tier, position). `total` is exact when the blocks were read to the
   * end, else the block matches extrapolated from the positions before the cursor.
   */
  answer(): SearchPage {
    const ranked = [...this.found.values()].sort(byRank);
    const rows = rowsOf(ranked.slice(0, PAGE));
    const hidden = hiddenAmong(ranked);
    if (this.block > this.lastBlock) return { rows, total: this.blockMatches - hidden };
    // Positions before the cursor were all read: up to the block's start, or to the last one re-checked.
    const covered = Math.min(
      this.docs,
      this.offset === 0 ? (this.block << this.plan.blockShift) - 1 : this.lastOrd,
    );
    const estimate = covered > 0 ? Math.round((this.blockMatches / covered) * this.docs) : 0;
    return { rows, total: Math.max(estimate, this.found.size, this.nameTier01) - hidden };
  }

  private keep(top: RankedMatch[]): void {
    for (const match of top) this.found.set(match.ord, match);
  }
}
