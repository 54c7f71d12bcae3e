import { randomBytes } from 'node:crypto';
import type { Db } from '@pkgreg/db';
import { type Logger, startPeriodic } from '@pkgreg/server-kit';
import {
  deleteOldDownloaders,
  deletePastDayKeys,
  ensureDayKey,
  foldDownloadDeltas,
  vacuumDownloadBatches,
} from './downloads.repository.js';

/** Batch rows per fold transaction (each holds up to the recorder's maxBatch calls). */
const FOLD_BATCH = 5_000;
/** Folded batch rows after which the flusher vacuums their table (a few ms for a table this small). */
const VACUUM_AFTER_ROWS = 2_000;

/** Folds every delta committed so far (several rounds when the backlog is large); returns rows folded. */
export async function foldAllDownloadDeltas(db: Db): Promise<number> {
  let total = 0;
  for (;;) {
    const folded = await foldDownloadDeltas(db, FOLD_BATCH);
    if (folded <= 0) return total;
    total += folded;
    if (folded < FOLD_BATCH) return total;
  }
}

export interface DownloadFlusher {
  stop(): Promise<void>;
}

/**
 * Runs in every API process: each tick folds the deltas into packages.download_count, so detail's
 * downloadCount trails a track call by at most about one interval. Several processes are safe: the
 * fold takes an advisory lock and the others skip their tick. Each tick also deletes the keys of past
 * UTC days (by `now`; one a process with a late clock made again after midnight goes at the next
 * tick); the first tick of each day deletes the downloaders before yesterday and makes tomorrow's key.
 */
export function startDownloadFlusher(
  db: Db,
  logger: Logger,
  intervalMs: number,
  now: () => number = Date.now,
): DownloadFlusher {
  let foldedSinceVacuum = 0;
  let downloadersKeptFrom = '';
  const loop = startPeriodic(
    async () => {
      foldedSinceVacuum += await foldAllDownloadDeltas(db);
      const today = new Date(now()).toISOString().slice(0, 10);
      await deletePastDayKeys(db, today);
      if (today !== downloadersKeptFrom) {
        await deleteOldDownloaders(db, today);
        const tomorrow = new Date(Date.parse(today) + 86_400_000).toISOString().slice(0, 10);
        await ensureDayKey(db, tomorrow, randomBytes(32));
        downloadersKeptFrom = today;
      }
      if (foldedSinceVacuum < VACUUM_AFTER_ROWS) return;
      foldedSinceVacuum = 0;
      await vacuumDownloadBatches(db);
    },
    { intervalMs, logger, failureMessage: 'download fold failed' },
  );
  return {
    async stop() {
      await loop.stop();
      // A last fold so a clean shutdown leaves nothing behind (deltas would be folded later anyway).
      await foldAllDownloadDeltas(db).catch((error: unknown) =>
        logger.warn({ err: error }, 'final fold failed'),
      );
    },
  };
}
