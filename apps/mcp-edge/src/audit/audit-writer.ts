import type { Db } from '@pkgreg/db';
import type { Logger } from '@pkgreg/server-kit';
import { type AuditRow, insertAuditRows } from './audit.repository.js';

// decisions.md, Audit: one row per /mcp request, admitted or rejected. Rows are buffered and written in
// one multi-row insert per batch, off the request path; a request never waits on the audit table.

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
  let buffer: AuditRow[] = [];
  let timer: NodeJS.Timeout | undefined;
  let inFlight: Promise<void> = Promise.resolve();

  async function write(rows: AuditRow[]): Promise<void> {
    try {
      for (let i = 0; i < rows.length; i += options.batchSize) {
        await insertAuditRows(db, rows.slice(i, i + options.batchSize));
      }
    } catch (error) {
      // Put them back for the next flush rather than lose them on a short outage.
      buffer = [...rows, ...buffer];
      const dropped = buffer.length - MAX_BUFFERED;
      if (dropped > 0) buffer.splice(0, dropped);
      logger.error({ err: error, rows: rows.length, dropped: Math.max(0, dropped) }, 'audit write failed');
    }
  }

  function flush(): Promise<void> {
    if (timer) {
      clearTimeout(timer);
      timer = undefined;
    }
    if (!buffer.length) return inFlight;
    const rows = buffer;
    buffer = [];
    // Batches are written one after another so rows land in order.
    inFlight = inFlight.then(() => write(rows));
    return inFlight;
  }

  return {
    record(row) {
      buffer.push(row);
      if (buffer.length >= options.batchSize) void flush();
      else if (!timer) {
        timer = setTimeout(() => void flush(), options.flushMs);
        timer.unref();
      }
    },
    flush,
    async close() {
      await flush();
      await inFlight;
    },
  };
}
