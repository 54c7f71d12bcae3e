import { type Db, type PgPool, requirePool } from '@pkgreg/db';
import type { Downloader } from './downloaders.js';
import { type BatchOutcome, type DownloadCount, insertDownloadBatch } from './downloads.repository.js';

/** Known ids are dropped all at once past this many (a bound, not an LRU: refilling costs one batch). */
const MAX_KNOWN_IDS = 100_000;
/** Packages remembered per downloader likewise (refilling costs the digest in a batch or two). */
const MAX_COMMITTED_PER_DOWNLOADER = 1_000;

interface Waiter {
  key: string;
  downloader: Downloader | undefined;
  resolve(found: boolean): void;
  reject(error: unknown): void;
}

export interface DownloadRecorder {
  /**
   * Resolves true once the download is durably recorded (its delta committed), false if not visible.
   * With a downloader it counts on the downloader's day, once per day among the unique downloaders
   * (downloads.repository.ts, the fold); without one only in downloadCount.
   */
  record(scope: string, name: string, downloader?: Downloader): Promise<boolean>;
  /** Waits for every pending batch. */
  drain(): Promise<void>;
  /**
   * Calls waiting for a batch and batches being committed (metrics read it on every scrape), and
   * whether the next batch is held after a busy commit (tests wait on it instead of on the clock).
   */
  backlog?(): { waiting: number; inFlight: number; holding: boolean };
}

export interface DownloadRecorderOptions {
  /** Largest batch in one INSERT. */
  maxBatch?: number;
  /** Batches running at once. 1 measured best: more in flight make smaller batches, each paying a commit. */
  maxInFlight?: number;
  /**
   * Connections of the writer's own (index.ts), so a batch never queues behind list/search/detail
   * queries; default: the pool under `db`. Either way the batch is a prepared statement.
   */
  pool?: PgPool;
  /**
   * After a busy commit, at most this long the next batch waits for the calls of the clients it just
   * answered (default 0: it never waits; the API passes TRACK_HOLD_MS). See createDownloadRecorder.
   */
  holdMs?: number;
  /** The hold's clock in ms (default performance.now): tests move it by hand. */
  now?: () => number;
}

/** A batch smaller than this is not a busy server's: the next one never waits after it. */
const HOLD_MIN_BATCH = 8;

/**
 * Group commit for track calls. A call joins the pending batch; while fewer than `maxInFlight` inserts
 * are running the batch is written as soon as the event loop has read the requests at hand, otherwise
 * it grows until one of them commits. So an idle server adds no delay, and a busy one writes hundreds
 * of calls as ONE row (package ids and counts, same-package calls summed, so a hot package never
 * serializes on anything). Each call is answered only after the insert holding it committed: an
 * answered track survives a crash or kill of the process.
 *
 * Clients that wait for their answer (an install, a benchmark's connections) otherwise settle into two
 * groups taking turns, each commit carrying half of them: while one group's batch commits, the other's
 * calls arrive. So after a commit of at least HOLD_MIN_BATCH calls, the next batch waits up to `holdMs`
 * for as many calls as the clients just answered plus those already waiting (the clients that seem to
 * be there), and goes as soon as they are in; one commit then carries them all. The wait polls on
 * setImmediate, which serves every other request meanwhile; it is the one moment the process spins.
 * Fewer, fuller commits are what make track faster under load (docs/benchmarks.md has the figures).
 */
export function createDownloadRecorder(db: Db, options: DownloadRecorderOptions = {}): DownloadRecorder {
  const maxBatch = options.maxBatch ?? 2000;
  const maxInFlight = options.maxInFlight ?? 1;
  let pending: Waiter[] = [];
  const inFlight = new Set<Promise<void>>();
  const pool = options.pool ?? requirePool(db, 'the download recorder');
  const insert = (counts: DownloadCount[], generation: number, day: string | null): Promise<BatchOutcome> =>
    insertDownloadBatch(pool, counts, generation, day);

  // Ids of packages seen visible at list-change generation `knownGeneration` (downloads.repository.ts):
  // a batch of known packages then needs no lookup at all. Only a hint: the statement re-checks every
  // package whenever the generation moved, so a stale entry can never count an invisible package.
  const knownIds = new Map<string, string>();
  let knownGeneration = -1;
  const learn = (outcome: BatchOutcome) => {
    if (outcome.generation !== undefined && outcome.generation !== knownGeneration) {
      knownIds.clear();
      knownGeneration = outcome.generation;
    }
    if (knownIds.size + outcome.found.length > MAX_KNOWN_IDS) knownIds.clear();
    for (const { scope, name, id } of outcome.found) knownIds.set(`${scope}/${name}`, id);
  };

  const writeBatch = async (batch: Waiter[]) => {
    const counts = new Map<string, DownloadCount>();
    // A client tracking a package again today costs no downloader row to check: each Downloader (one
    // object per address and day, downloaders.ts) remembers the packages committed for it.
    const fresh: Array<[key: string, downloader: Downloader]> = [];
    for (const waiter of batch) {
      let entry = counts.get(waiter.key);
      if (entry) entry.count += 1;
      else {
        const [scope = '', name = ''] = waiter.key.split('/');
        entry = { scope, name, count: 1, id: knownIds.get(waiter.key) };
        counts.set(waiter.key, entry);
      }
      const downloader = waiter.downloader;
      if (!downloader || downloader.committed?.has(waiter.key)) continue;
      entry.downloaders ??= new Set();
      entry.downloaders.add(downloader.digest);
      fresh.push([waiter.key, downloader]);
    }
    try {
      const outcome = await insert([...counts.values()], knownGeneration, batch[0]?.downloader?.day ?? null);
      learn(outcome);
      const missing = new Set(outcome.missing.map((r) => `${r.scope}/${r.name}`));
      for (const [key, downloader] of fresh) {
        if (missing.has(key)) continue;
        downloader.committed ??= new Set();
        if (downloader.committed.size >= MAX_COMMITTED_PER_DOWNLOADER) downloader.committed.clear();
        downloader.committed.add(key);
      }
      for (const waiter of batch) waiter.resolve(!missing.has(waiter.key));
    } catch (error) {
      for (const waiter of batch) waiter.reject(error);
    }
  };

  const holdMs = options.holdMs ?? 0;
  const now = options.now ?? (() => performance.now());
  let holding = false;

  // A batch holds calls of one UTC day (its row carries the day): around midnight it ends where the
  // day changes.
  const batchLength = () => {
    const limit = Math.min(maxBatch, pending.length);
    const day = pending[0]?.downloader?.day;
    for (let i = 1; i < limit; i += 1) if (pending[i]?.downloader?.day !== day) return i;
    return limit;
  };

  const pump = () => {
    if (holding) return;
    while (inFlight.size < maxInFlight && pending.length > 0) {
      const batch = pending.slice(0, batchLength());
      pending = pending.slice(batch.length);
      const write: Promise<void> = writeBatch(batch).finally(() => {
        inFlight.delete(write);
        afterCommit(batch.length);
      });
      inFlight.add(write);
    }
  };

  const afterCommit = (answered: number) => {
    if (holding) return; // another batch's hold is running (maxInFlight > 1): it pumps when it ends
    const expected = Math.min(answered + pending.length, maxBatch);
    if (holdMs <= 0 || answered < HOLD_MIN_BATCH || pending.length >= expected) {
      pump();
      return;
    }
    holding = true;
    const until = now() + holdMs;
    const poll = () => {
      if (pending.length >= expected || now() >= until) {
        holding = false;
        pump();
      } else setImmediate(poll);
    };
    setImmediate(poll);
  };

  // A call does not start a batch on its own: the pump runs once the event loop has read every
  // request already on the sockets (setImmediate follows the poll phase), so those all share one
  // commit. Starting at the first call wrote it alone and left the others waiting a full commit.
  let pumpScheduled = false;
  const schedulePump = () => {
    if (pumpScheduled) return;
    pumpScheduled = true;
    setImmediate(() => {
      pumpScheduled = false;
      pump();
    });
  };

  return {
    record(scope, name, downloader) {
      return new Promise<boolean>((resolve, reject) => {
        pending.push({ key: `${scope}/${name}`, downloader, resolve, reject });
        schedulePump();
      });
    },
    backlog() {
      return { waiting: pending.length, inFlight: inFlight.size, holding };
    },
    async drain() {
      while (inFlight.size > 0 || pending.length > 0) {
        holding = false; // shutting down: nothing more is coming to wait for
        pump();
        // With no hold, pump writes whatever waits. Should it ever not, this loop would spin on
        // microtasks for good (no timer could fire to end it): a shutdown that cannot progress says so.
        if (inFlight.size === 0) throw new Error('download recorder: drain could not start a batch');
        await Promise.all(inFlight);
      }
    },
  };
}
