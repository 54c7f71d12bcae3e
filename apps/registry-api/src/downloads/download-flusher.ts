import type { Db } from '@pkgreg/db';
import type { Logger } from '@pkgreg/server-kit';
import { foldDownloadDeltas } from './downloads.repository.js';

const FOLD_BATCH = 50_000;

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
 * fold takes an advisory lock and the others skip their tick.
 */
export function startDownloadFlusher(db: Db, logger: Logger, intervalMs: number): DownloadFlusher {
  let running: Promise<unknown> | undefined;
  let stopped = false;
  const timer = setInterval(() => {
    if (running || stopped) return;
    running = foldAllDownloadDeltas(db)
      .catch((error: unknown) => logger.warn({ err: error }, 'download fold failed'))
      .finally(() => {
        running = undefined;
      });
  }, intervalMs);
  timer.unref();
  return {
    async stop() {
      stopped = true;
      clearInterval(timer);
      await running;
      // A last fold so a clean shutdown leaves nothing behind (deltas would be folded later anyway).
      await foldAllDownloadDeltas(db).catch((error: unknown) =>
        logger.warn({ err: error }, 'final fold failed'),
      );
    },
  };
}
