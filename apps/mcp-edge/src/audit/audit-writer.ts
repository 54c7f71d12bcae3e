import { type Db, requirePool } from '@pkgreg/db';
import type { Logger } from '@pkgreg/server-kit';
import { type AuditRow, insertAuditRows } from './audit.repository.js';

// decisions.md, Audit: one row per /mcp request, admitted or rejected. Rows are buffered and written with
// one COPY per batch, off the request path; a request never waits on the audit table.

export interface AuditWriter {
  record(row: AuditRow): void;
  /** Writes whatever is buffered now. */
  flush(): Promise<void>;
  /** Flushes and stops the timer (shutdown). */
  close(): Promise<void>;
}

/** Rows held while the database is unreachable; beyond this the oldest are dropped (and counted in logs). */
const MAX_BUFFERED = 50_000;

export function createAuditWriter(
  db: Db,
  logger: Logger,
  options: { flushMs: number; batchSize: number },
): AuditWriter {
  const pool = requirePool(db, 'the audit writer (COPY)');
  // Rows not written yet, oldest first. A batch is taken off the front while it is written and put back
  // there if the write fails, so rows land in order and each exactly once.
  const buffer: AuditRow[] = [];
  let timer: NodeJS.Timeout | undefined;
  let draining: Promise<boolean> | undefined; // resolves false when a write failed
  let dropped = 0; // rows dropped for MAX_BUFFERED since the last log line
  let retrying = false; // a write failed: the next attempt waits for the timer, not for the next request

  function schedule(): void {
    if (timer) return;
    timer = setTimeout(() => void drainNow(), options.flushMs);
    timer.unref();
  }

  /** Writes batches until the buffer is empty (true) or a write fails (false: retried after flushMs). */
  async function drain(): Promise<boolean> {
    while (buffer.length) {
      const batch = buffer.splice(0, options.batchSize);
      try {
        await insertAuditRows(pool, batch);
      } catch (error) {
        if (isDataError(error)) {
          // Rows Postgres refuses as data would be refused again on every retry, holding back every
          // row after them: this batch is dropped, and said so.
          logger.error({ err: error, rows: batch.length }, 'audit rows refused by the database, dropped');
          continue;
        }
        buffer.unshift(...batch);
        logger.error({ err: error, rows: buffer.length, dropped }, 'audit write failed');
        dropped = 0;
        retrying = true; // one attempt per flushMs while the database is away, not one per request
        schedule();
        return false;
      }
    }
    return true;
  }

  /** Starts a drain now, or joins the one running. */
  function drainNow(): Promise<boolean> {
    if (timer) {
      clearTimeout(timer);
      timer = undefined;
    }
    retrying = false;
    draining ??= drain().finally(() => {
      draining = undefined;
    });
    return draining;
  }

  return {
    record(row) {
      buffer.push(row);
      if (buffer.length > MAX_BUFFERED) {
        // Dropped a tenth at a time, not one row per request (each drop moves the whole array).
        const excess = buffer.length - Math.floor(MAX_BUFFERED * 0.9);
        buffer.splice(0, excess);
        dropped += excess;
      }
      if (buffer.length >= options.batchSize && !draining && !retrying) void drainNow();
      else schedule();
    },
    async flush() {
      await drainNow();
    },
    async close() {
      // A running drain has taken its batch off the buffer already: it is waited for even when the
      // buffer is empty. Rows recorded while a drain ran are written too; a failed write ends it (the
      // database is away).
      while (draining || buffer.length) if (!(await drainNow())) break;
      if (timer) clearTimeout(timer);
      timer = undefined;
    },
  };
}

/** Postgres data exceptions (SQLSTATE class 22) and integrity violations (23): the rows, not the moment. */
function isDataError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && (code.startsWith('22') || code.startsWith('23'));
}
