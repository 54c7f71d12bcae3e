import type { Db } from '@pkgreg/db';
import type { Logger } from '@pkgreg/server-kit';
import { sql } from 'kysely';
import { readListChangeCounter, refreshListRanks } from './packages.repository.js';

// One refresh at a time across every API process: the others skip their tick instead of queueing.
const REFRESH_LOCK_KEY = 0x706b_6c72; // "pklr"

/** Refreshes the list positions unless another process is doing it right now; true when it ran. */
export async function refreshListRanksOnce(db: Db): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const lock = await sql<{
      ok: boolean;
    }>`select pg_try_advisory_xact_lock(${REFRESH_LOCK_KEY}) as ok`.execute(trx);
    if (!lock.rows[0]?.ok) return false;
    await refreshListRanks(trx);
    return true;
  });
}

export interface ListRanksRefresher {
  stop(): Promise<void>;
}

/**
 * Polls the change counter every `intervalMs` and refreshes when it moved. The counter is a sequence,
 * bumped before the writer commits, so a refresh can start before that commit is visible: after every
 * refresh one more "settling" refresh runs on the next quiet tick, which picks such a straggler up.
 * Lists therefore trail package changes by about one interval plus one refresh (documented in
 * docs/decisions.md).
 */
export function startListRanksRefresher(db: Db, logger: Logger, intervalMs: number): ListRanksRefresher {
  let lastSeen = -1;
  let settle = false;
  let running: Promise<void> | undefined;
  let stopped = false;

  const tick = async () => {
    const counter = await readListChangeCounter(db);
    if (counter === lastSeen && !settle) return;
    settle = counter !== lastSeen;
    const started = Date.now();
    const ran = await refreshListRanksOnce(db);
    lastSeen = counter;
    if (!ran) settle = true;
    logger.debug({ ms: Date.now() - started, ran }, 'list ranks refresh');
  };

  const timer = setInterval(() => {
    if (running || stopped) return;
    running = tick()
      .catch((error: unknown) => logger.warn({ err: error }, 'list ranks refresh failed'))
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
    },
  };
}
