import { type Db, type PgPool, requirePool } from '@pkgreg/db';
import { type BatchOutcome, type DownloadCount, insertDownloadBatch } from './downloads.repository.js';

/** Known ids are dropped all at once past this many (a bound, not an LRU: refilling costs one batch). */
const MAX_KNOWN_IDS = 100_000;

interface Waiter {
  key: string;
  resolve(found: boolean): void;
  reject(error: unknown): void;
}

export interface DownloadRecorder {
  /** Resolves true once the download is durably recorded (its delta committed), false if not visible. */
  record(scope: string, name: string): Promise<boolean>;
  /** Waits for every pending batch. */
  drain(): Promise<void>;
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
}

/**
 * Group commit for track calls. A call joins the pending batch; while fewer than `maxInFlight` inserts
 * are running the batch is written as soon as the event loop has read the requests at hand, otherwise
 * it grows until one of them commits. So an idle server adds no delay, and a busy one writes hundreds
 * of calls as ONE row (package ids and counts, same-package calls summed, so a hot package never
 * serializes on anything). Each call is answered only after the insert holding it committed: an
 * answered track survives a crash or kill of the process.
 */
export function createDownloadRecorder(db: Db, options: DownloadRecorderOptions = {}): DownloadRecorder {
  const maxBatch = options.maxBatch ?? 2000;
  const maxInFlight = options.maxInFlight ?? 1;
  let pending: Waiter[] = [];
  const inFlight = new Set<Promise<void>>();
  const pool = options.pool ?? requirePool(db, 'the download recorder');
  const insert = (counts: DownloadCount[], generation: number): Promise<BatchOutcome> =>
    insertDownloadBatch(pool, counts, generation);

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
    for (const waiter of batch) {
      const entry = counts.get(waiter.key);
      if (entry) entry.count += 1;
      else {
        const [scope = '', name = ''] = waiter.key.split('/');
        counts.set(waiter.key, { scope, name, count: 1, id: knownIds.get(waiter.key) });
      }
    }
    try {
      const outcome = await insert([...counts.values()], knownGeneration);
      learn(outcome);
      const missing = new Set(outcome.missing.map((r) => `${r.scope}/${r.name}`));
      for (const waiter of batch) waiter.resolve(!missing.has(waiter.key));
    } catch (error) {
      for (const waiter of batch) waiter.reject(error);
    }
  };

  const pump = () => {
    while (inFlight.size < maxInFlight && pending.length > 0) {
      const batch = pending.slice(0, maxBatch);
      pending = pending.slice(batch.length);
      const write: Promise<void> = writeBatch(batch).finally(() => {
        inFlight.delete(write);
        pump();
      });
      inFlight.add(write);
    }
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
    record(scope, name) {
      return new Promise<boolean>((resolve, reject) => {
        pending.push({ key: `${scope}/${name}`, resolve, reject });
        schedulePump();
      });
    },
    async drain() {
      while (inFlight.size > 0 || pending.length > 0) {
        pump();
        await Promise.all(inFlight);
      }
    },
  };
}
