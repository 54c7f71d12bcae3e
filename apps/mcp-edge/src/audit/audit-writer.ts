import { type Db, requirePool } from '@pkgreg/db';
import type { Logger } from '@pkgreg/server-kit';
import { type AuditRow, copyAuditLines, createAuditLineEncoder } from './audit.repository.js';

// decisions.md, Audit: one row per /mcp request, admitted or rejected. Rows are buffered and written with
// one COPY per batch, off the request path; a request never waits on the audit table.
//
// Rows are held as their COPY bytes, in batch buffers that are used again once written: what waits for
// Postgres is no JavaScript object for the collector to trace. Batches of 2000 rows by default: a
// batch's fixed cost to Postgres is large (docs/benchmarks.md, MCP edge).

export interface AuditWriter {
  record(row: AuditRow): void;
  /** Writes whatever is buffered now. */
  flush(): Promise<void>;
  /** Flushes and stops the timer (shutdown). */
  close(): Promise<void>;
}

/** Rows held while the database is unreachable; beyond this the oldest batches are dropped (and logged). */
const MAX_BUFFERED = 50_000;
/** Bytes reserved per row of a batch; a batch whose next row does not fit is closed early. */
const BYTES_PER_ROW = 256;
/** Buffers of written batches kept for the next ones (a batch of 2000 rows reserves 512 KB). */
const SPARE_BUFFERS = 2;

/** Rows encoded as COPY text, written (or refused) as one. */
interface Batch {
  bytes: Buffer;
  used: number;
  rows: number;
}

export function createAuditWriter(
  db: Db,
  logger: Logger,
  options: { flushMs: number; batchSize: number },
): AuditWriter {
  const pool = requirePool(db, 'the audit writer (COPY)');
  const encode = createAuditLineEncoder();
  // Closed batches not written yet, oldest first, and the one rows are added to. A batch is taken off
  // the front while it is written and put back there if the write fails, so rows land in order and each
  // exactly once.
  const closed: Batch[] = [];
  let open: Batch | undefined;
  const spare: Buffer[] = [];
  let buffered = 0; // rows in `closed` and `open`
  let timer: NodeJS.Timeout | undefined;
  let draining: Promise<boolean> | undefined; // resolves false when a write failed
  let dropped = 0; // rows dropped for MAX_BUFFERED since the last log line
  let retrying = false; // a write failed: the next attempt waits for the timer, not for the next request

  function closeOpen(): void {
    if (open?.rows) closed.push(open);
    open = undefined;
  }

  function append(line: string): Batch {
    // UTF-8 takes at most 3 bytes per UTF-16 unit: a line of n units always fits in 3n bytes.
    const room = line.length * 3;
    if (open && (open.rows >= options.batchSize || open.used + room > open.bytes.length)) closeOpen();
    if (!open) {
      const size = Math.max(options.batchSize * BYTES_PER_ROW, room, 16 * 1024);
      const reused = spare.pop();
      open = { bytes: reused && reused.length >= size ? reused : Buffer.allocUnsafe(size), used: 0, rows: 0 };
    }
    open.used += open.bytes.write(line, open.used);
    open.rows += 1;
    buffered += 1;
    return open;
  }

  /** A batch is written (its COPY committed, so no write reads its buffer any more): the buffer may hold the next one. */
  function recycle(batch: Batch): void {
    if (spare.length < SPARE_BUFFERS) spare.push(batch.bytes);
  }

  function schedule(): void {
    if (timer) return;
    timer = setTimeout(() => void drainNow(), options.flushMs);
    timer.unref();
  }

  /** Writes batches until none is left (true) or a write fails (false: retried after flushMs). */
  async function drain(): Promise<boolean> {
    for (;;) {
      if (!closed.length) closeOpen();
      const batch = closed.shift();
      if (!batch) return true;
      buffered -= batch.rows;
      try {
        // Once this resolves the rows are committed: no write holds the buffer any more.
        await copyAuditLines(pool, batch.bytes.subarray(0, batch.used));
        recycle(batch);
      } catch (error) {
        if (isDataError(error)) {
          // Rows Postgres refuses as data would be refused again on every retry, holding back every
          // row after them: this batch is dropped, and said so.
          // Its buffer is not reused: the failed COPY's connection may still be sending from it.
          logger.error({ err: error, rows: batch.rows }, 'audit rows refused by the database, dropped');
          continue;
        }
        closed.unshift(batch);
        buffered += batch.rows;
        logger.error({ err: error, rows: buffered, dropped }, 'audit write failed');
        dropped = 0;
        retrying = true; // one attempt per flushMs while the database is away, not one per request
        schedule();
        return false;
      }
    }
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
      const batch = append(encode(row));
      if (buffered > MAX_BUFFERED) {
        // Whole batches, oldest first, down to nine tenths: not one drop per request.
        while (buffered > MAX_BUFFERED * 0.9 && closed.length) {
          const old = closed.shift() as Batch;
          buffered -= old.rows;
          dropped += old.rows;
        }
      }
      if (batch.rows >= options.batchSize && !draining && !retrying) void drainNow();
      else schedule();
    },
    async flush() {
      await drainNow();
    },
    async close() {
      // A running drain has taken its batch off the buffer already: it is waited for even when the
      // buffer is empty. Rows recorded while a drain ran are written too; a failed write ends it (the
      // database is away).
      while (draining || buffered) if (!(await drainNow())) break;
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
