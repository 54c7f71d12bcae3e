import { type Db, requirePool } from '@pkgreg/db';
import { type Logger, outageMonitorOf } from '@pkgreg/server-kit';
import { type AuditRow, copyAuditRows, createAuditBatchEncoder } from './audit.repository.js';

// decisions.md, Audit: one row per /mcp request, admitted or rejected. Rows are buffered and written with
// one COPY per batch, off the request path; a request never waits on the audit table.
//
// The open batch keeps the rows as recorded and encodes them for COPY, into bytes, in one pass when it
// closes: encoding and writing each row as it came cost the request path ~3 µs (cold code and memory
// every time; docs/benchmarks.md), the pass a fraction of that per row. Closed batches wait for Postgres
// as bytes, in buffers used again once written: no JavaScript object for the collector to trace, however
// long the database is away.
//
// Batches of 2000 rows by default: a batch's fixed cost to Postgres (and to the edge) is large
// (docs/benchmarks.md, MCP edge). A batch is written when it is full or when the oldest row in it has
// waited flushMs: rows recorded while a COPY runs wait for either, so a busy edge writes full batches,
// not whatever arrived during the last COPY.

export interface AuditWriter {
  /** Buffers `row`, which is kept as it is until its batch closes: it must not be changed after. */
  record(row: AuditRow): void;
  /** Writes whatever is buffered now. */
  flush(): Promise<void>;
  /** Flushes and stops the timer (shutdown). */
  close(): Promise<void>;
}

/** Rows held while the database is unreachable; beyond this the oldest batches are dropped (and logged). */
const MAX_BUFFERED = 50_000;
/** Bytes a new batch buffer has per row, at least: buffers of that size are used again. */
const BYTES_PER_ROW = 256;
/** Buffers of written batches kept for the next ones (a batch of 2000 rows takes 512 KB). */
const SPARE_BUFFERS = 2;

/** Rows encoded as one COPY's data, written (or refused) as one. */
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
  const minBytes = Math.max(options.batchSize * BYTES_PER_ROW, 16 * 1024);
  const batches = new BatchBuffer(options.batchSize, createAuditBatchEncoder(minBytes));
  let timer: NodeJS.Timeout | undefined;
  let draining: Promise<boolean> | undefined; // resolves false when a write failed
  let retrying = false; // a write failed: the next attempt waits for the timer, not for the next request

  function schedule(): void {
    if (timer) return;
    timer = setTimeout(() => void drainNow(), options.flushMs);
    timer.unref();
  }

  /**
   * Writes the batches buffered when it starts, and those that fill while it writes, until none is left
   * (true) or a write fails (false: retried after flushMs).
   */
  async function drain(): Promise<boolean> {
    batches.closeOpen();
    for (;;) {
      const batch = batches.take();
      if (!batch) return true;
      try {
        // Once this resolves the rows are committed: no write holds the buffer any more.
        await copyAuditRows(pool, batch.bytes.subarray(0, batch.used));
        batches.recycle(batch);
      } catch (error) {
        if (isDataError(error)) {
          // Rows Postgres refuses as data would be refused again on every retry, holding back every
          // row after them: this batch is dropped, and said so.
          // Its buffer is not reused: the failed COPY's connection may still be sending from it.
          logger.error({ err: error, rows: batch.rows }, 'audit rows refused by the database, dropped');
          continue;
        }
        batches.putBack(batch);
        // While PostgreSQL is down the monitor has said so once; dropped rows are still reported.
        if (!outageMonitorOf(logger).failed(error) || batches.dropped > 0) {
          logger.error({ err: error, rows: batches.rows, dropped: batches.dropped }, 'audit write failed');
        }
        batches.dropped = 0;
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
      // Rows recorded during the last write and not a full batch yet: written by flushMs at the latest.
      if (batches.rows > 0) schedule();
    });
    return draining;
  }

  return {
    record(row) {
      const full = batches.append(row);
      if (batches.rows > MAX_BUFFERED) batches.dropOldest();
      // A drain running takes the batch on its next turn; after a failed write the timer retries.
      if (full && !draining && !retrying) void drainNow();
      else schedule();
    },
    async flush() {
      // A drain that started before some of the rows buffered now does not write them: a second one does.
      if (draining && !(await draining)) return;
      await drainNow();
    },
    async close() {
      // A running drain has taken its batch off the buffer already: it is waited for even when the
      // buffer is empty. Rows recorded while a drain ran are written too; a failed write ends it (the
      // database is away).
      while (draining || batches.rows) if (!(await drainNow())) break;
      if (timer) clearTimeout(timer);
      timer = undefined;
    },
  };
}

/**
 * Closed batches not written yet, oldest first, and the open one rows are added to. A batch is taken off
 * the front while it is written and put back there if the write fails, so rows land in order and each
 * exactly once.
 */
class BatchBuffer {
  private readonly closed: Batch[] = [];
  /** The rows of the open batch. */
  private open: AuditRow[] = [];
  private readonly spare: Buffer[] = [];
  /** Rows in the closed batches and the open one. */
  rows = 0;
  /** Rows dropped for MAX_BUFFERED since the last log line. */
  dropped = 0;

  constructor(
    private readonly batchSize: number,
    private readonly encode: ReturnType<typeof createAuditBatchEncoder>,
  ) {}

  /** Adds one row; returns whether it filled its batch (which is then closed). */
  append(row: AuditRow): boolean {
    this.open.push(row);
    this.rows += 1;
    if (this.open.length < this.batchSize) return false;
    this.closeOpen();
    return true;
  }

  /** Whole batches, oldest first, down to nine tenths of MAX_BUFFERED: not one drop per request. */
  dropOldest(): void {
    while (this.rows > MAX_BUFFERED * 0.9 && this.closed.length) {
      const old = this.closed.shift() as Batch;
      this.rows -= old.rows;
      this.dropped += old.rows;
    }
  }

  /** The oldest closed batch, off the buffer while it is written. */
  take(): Batch | undefined {
    const batch = this.closed.shift();
    if (batch) this.rows -= batch.rows;
    return batch;
  }

  /** A batch whose write failed goes back to the front, to be written before any later row. */
  putBack(batch: Batch): void {
    this.closed.unshift(batch);
    this.rows += batch.rows;
  }

  /** A batch is written (its COPY committed, so no write reads its buffer any more): the buffer may hold the next one. */
  recycle(batch: Batch): void {
    if (this.spare.length < SPARE_BUFFERS) this.spare.push(batch.bytes);
  }

  /** The open batch joins the closed ones as bytes, to be written with them. */
  closeOpen(): void {
    const rows = this.open.length;
    if (!rows) return;
    const { bytes, used } = this.encode(this.open, this.spare.pop());
    this.open = [];
    this.closed.push({ bytes, used, rows });
  }
}

/** Postgres data exceptions (SQLSTATE class 22) and integrity violations (23): the rows, not the moment. */
function isDataError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && (code.startsWith('22') || code.startsWith('23'));
}
