import type { Db } from '@pkgreg/db';
import { type Logger, startPeriodic } from '@pkgreg/server-kit';
import { sql } from 'kysely';
import { rebuildSearchTables } from '../search/search.service.js';
import {
  readDerivedCounter,
  readListChangeCounter,
  readPopularityInputs,
  readPopularityState,
  refreshListRanks,
  refreshPopularityRanks,
  writeDerivedCounter,
} from './packages.repository.js';

// One refresh at a time across every API process: the others skip their tick instead of queueing.
const REFRESH_LOCK_KEY = 0x706b_6c72; // "pklr"

/** Runs `work` on one connection under the refresh lock, unless another process holds it (false). */
async function underRefreshLock(db: Db, work: (conn: Db) => Promise<void>): Promise<boolean> {
  return db.connection().execute(async (conn) => {
    const lock = await sql<{ ok: boolean }>`select pg_try_advisory_lock(${REFRESH_LOCK_KEY}) as ok`.execute(
      conn,
    );
    if (!lock.rows[0]?.ok) return false;
    try {
      await work(conn);
      return true;
    } finally {
      await sql`select pg_advisory_unlock(${REFRESH_LOCK_KEY})`.execute(conn);
    }
  });
}

/**
 * Refreshes everything derived from packages for reading at scale (list positions, popularity
 * positions, and search's tables through search's own rebuild) unless another process is doing it
 * right now; true when it ran.
 */
export async function refreshDerivedTables(db: Db): Promise<boolean> {
  return underRefreshLock(db, async (conn) => {
    // Read before rebuilding: a change racing the rebuild leaves the stored value behind, not ahead.
    const counter = await readListChangeCounter(conn);
    const popularity = await readPopularityInputs(conn);
    await refreshListRanks(conn);
    // A package new since the last refresh takes its place in the downloads and trending orders too.
    await refreshPopularityRanks(conn, popularity);
    await rebuildSearchTables(conn);
    await writeDerivedCounter(conn, counter);
  });
}

/**
 * Refreshes the downloads and trending positions when downloads were folded since their last refresh
 * or the UTC day changed (trending's weights move with it); true when it ran.
 */
export async function refreshPopularity(db: Db): Promise<boolean> {
  const [inputs, state] = await Promise.all([readPopularityInputs(db), readPopularityState(db)]);
  if (state && state.counter === inputs.counter && state.day === inputs.day) return false;
  return underRefreshLock(db, (conn) => refreshPopularityRanks(conn, inputs));
}

export interface PopularityRefresher {
  stop(): Promise<void>;
}

/**
 * Refreshes the popularity positions every `intervalMs` when downloads moved (refreshPopularity). At 1M
 * packages a refresh takes seconds, so the downloads and trending orders trail the counts by about one
 * interval; the next refresh waits at least twice as long as the last took.
 */
export function startPopularityRefresher(db: Db, logger: Logger, intervalMs: number): PopularityRefresher {
  let notBefore = 0;
  const tick = async () => {
    if (Date.now() < notBefore) return;
    const started = Date.now();
    const ran = await refreshPopularity(db);
    const ms = Date.now() - started;
    notBefore = Date.now() + 2 * ms;
    if (ran) logger.debug({ ms }, 'popularity refresh');
  };
  return startPeriodic(tick, { intervalMs, logger, failureMessage: 'popularity refresh failed' });
}

export interface DerivedTablesRefresher {
  stop(): Promise<void>;
}

/**
 * Polls the change counter every `intervalMs` and refreshes when it moved. The counter is a sequence,
 * bumped before the writer commits, so a refresh can start before that commit is visible: after every
 * refresh one more "settling" refresh runs on the next quiet tick, which picks such a straggler up.
 * A refresh of a large table takes seconds, so the next one waits at least twice as long as the last
 * took (the machine keeps serving). Lists and broad searches therefore trail package changes by about
 * one interval plus one refresh; detail, track and selective searches read packages live.
 */
export function startDerivedTablesRefresher(
  db: Db,
  logger: Logger,
  intervalMs: number,
): DerivedTablesRefresher {
  let lastSeen = -1;
  let settle = false;
  let notBefore = 0;

  const tick = async () => {
    if (Date.now() < notBefore) return;
    // After a restart, start from what the last rebuild (by any process) saw, not from scratch.
    if (lastSeen < 0) lastSeen = (await readDerivedCounter(db)) ?? -1;
    const counter = await readListChangeCounter(db);
    if (counter === lastSeen && !settle) return;
    settle = counter !== lastSeen;
    const started = Date.now();
    const ran = await refreshDerivedTables(db);
    const ms = Date.now() - started;
    lastSeen = counter;
    if (!ran) settle = true;
    notBefore = Date.now() + 2 * ms;
    logger.debug({ ms, ran }, 'derived tables refresh');
  };

  return startPeriodic(tick, { intervalMs, logger, failureMessage: 'derived tables refresh failed' });
}
