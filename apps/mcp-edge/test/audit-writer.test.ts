import { randomBytes } from 'node:crypto';
import { createDb, type Db } from '@pkgreg/db';
import { createTestDatabase, type TestDatabase } from '@pkgreg/db/testing';
import { createLogger } from '@pkgreg/server-kit';
import { sql } from 'kysely';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { AuditRow } from '../src/audit/audit.repository.js';
import { createAuditWriter } from '../src/audit/audit-writer.js';

// decisions.md, Audit: one record per /mcp request, written off the request path. The writer keeps
// rows through a failure of the database and writes each exactly once; rows Postgres refuses as data
// are dropped and logged, never retried in front of the rows after them.

let t: TestDatabase;
// The writer connects as a role of this run whose INSERT right the tests take away and give back.
const roleName = `pkgreg_audit_${randomBytes(4).toString('hex')}`;
const role = sql.id(roleName);
let writerDb: Db;
beforeAll(async () => {
  t = await createTestDatabase();
  await sql`create role ${role} login`.execute(t.db);
  await sql`grant select, insert on audit_records to ${role}`.execute(t.db);
  const url = new URL(t.url);
  url.username = roleName;
  writerDb = createDb(url.toString(), { max: 2 });
});
afterAll(async () => {
  await writerDb?.destroy();
  await t?.destroy(); // drops the grants with the database
  const admin = createDb('postgres://postgres@127.0.0.1:5432/postgres', { max: 1 });
  await sql`drop role if exists ${role}`.execute(admin);
  await admin.destroy();
});
beforeEach(async () => {
  await sql`truncate audit_records`.execute(t.db);
  await sql`grant insert on audit_records to ${role}`.execute(t.db);
});

function capturingLogger() {
  const lines: Array<{ msg: string; rows?: number }> = [];
  const logger = createLogger('audit-test', 'info', {
    write: (line: string) => {
      lines.push(JSON.parse(line));
    },
  });
  return { logger, lines };
}

const row = (requestId: string, outcome = 'ok'): AuditRow => ({
  at: new Date(),
  request_id: requestId,
  namespace: 'ns-audit',
  client_id: 'client-1',
  method: 'tools/call',
  tool: 'pkgreg.system.v1.info',
  outcome: outcome as AuditRow['outcome'],
  reason: null,
  http_status: 200,
  latency_ms: 0.5,
  backend: 'development',
});

const written = async () =>
  (await t.db.selectFrom('audit_records').select('request_id').orderBy('at').execute()).map(
    (r) => r.request_id,
  );

describe('audit writer', () => {
  it('keeps the rows through a failed write and writes each once when the database takes them again', async () => {
    const { logger, lines } = capturingLogger();
    const writer = createAuditWriter(writerDb, logger, { flushMs: 60_000, batchSize: 2 });
    await sql`revoke insert on audit_records from ${role}`.execute(t.db);
    for (const id of ['r1', 'r2', 'r3']) writer.record(row(id));
    await writer.flush();
    expect(await written()).toEqual([]);
    expect(lines.filter((l) => l.msg === 'audit write failed')).toHaveLength(1);
    // While the database is away, more requests do not each try again: the retry waits for the timer.
    for (const id of ['r4', 'r5', 'r6', 'r7']) writer.record(row(id));
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(lines.filter((l) => l.msg === 'audit write failed')).toHaveLength(1);

    await sql`grant insert on audit_records to ${role}`.execute(t.db);
    writer.record(row('r8'));
    await writer.close();
    expect(await written()).toEqual(['r1', 'r2', 'r3', 'r4', 'r5', 'r6', 'r7', 'r8']);
  });

  it('writes full batches under load: rows recorded during a COPY wait for a full batch or flushMs', async () => {
    const writer = createAuditWriter(writerDb, createLogger('audit-test', 'silent'), {
      flushMs: 1000,
      batchSize: 100,
    });
    const ids = Array.from({ length: 230 }, (_, i) => `l${String(i).padStart(3, '0')}`);
    const record = (from: number, to: number) => {
      for (const id of ids.slice(from, to)) writer.record(row(id));
    };
    record(0, 100); // full: its COPY starts
    record(100, 130); // recorded while that COPY runs
    await expect.poll(written, { interval: 5 }).toHaveLength(100);
    // One COPY per batch of whatever arrived during the last one would have written these at once.
    await new Promise((r) => setTimeout(r, 150));
    expect(await written()).toHaveLength(100);
    record(130, 200); // the batch fills: written now, not at the timer
    await expect.poll(written, { interval: 5, timeout: 300 }).toHaveLength(200);
    record(200, 230);
    // Nothing more is recorded: the timer writes the last rows.
    await expect.poll(written, { interval: 20, timeout: 3000 }).toEqual(ids);
    await writer.close();
  });

  it('close waits for a batch already being written (shutdown loses no row)', async () => {
    const writer = createAuditWriter(writerDb, createLogger('audit-test', 'silent'), {
      flushMs: 60_000,
      batchSize: 2,
    });
    // A SHARE lock makes the COPY wait, so the full batch is in flight, off the buffer, when close runs.
    let closed = false;
    let closing: Promise<void> | undefined;
    await t.db.transaction().execute(async (trx) => {
      await sql`lock table audit_records in share mode`.execute(trx);
      writer.record(row('w1'));
      writer.record(row('w2')); // the batch is full: its write starts and blocks on the lock
      closing = writer.close().then(() => {
        closed = true;
      });
      await new Promise((r) => setTimeout(r, 300));
      expect(closed).toBe(false);
    }); // commit: the lock goes, the COPY runs
    await closing;
    expect(await written()).toEqual(['w1', 'w2']);
  });

  it('flush waits for a batch already being written, then writes the rows recorded since', async () => {
    const writer = createAuditWriter(writerDb, createLogger('audit-test', 'silent'), {
      flushMs: 60_000,
      batchSize: 2,
    });
    let flushed: Promise<void> | undefined;
    await t.db.transaction().execute(async (trx) => {
      await sql`lock table audit_records in share mode`.execute(trx);
      writer.record(row('f1'));
      writer.record(row('f2')); // the batch is full: its write starts and blocks on the lock
      writer.record(row('f3')); // recorded while that write runs: not in it
      flushed = writer.flush();
    }); // commit: the lock goes, the COPY runs
    await flushed;
    expect(await written()).toEqual(['f1', 'f2', 'f3']);
    await writer.close();
  });

  it('drops only a batch Postgres refuses as data, and writes the batches after it', async () => {
    const { logger, lines } = capturingLogger();
    const writer = createAuditWriter(writerDb, logger, { flushMs: 60_000, batchSize: 2 });
    // An outcome outside the check constraint stands for any row the database refuses as data.
    for (const r of [row('a1'), row('a2'), row('b1', 'bogus'), row('b2'), row('c1')]) writer.record(r);
    await writer.close();
    expect(await written()).toEqual(['a1', 'a2', 'c1']);
    const dropped = lines.filter((l) => l.msg === 'audit rows refused by the database, dropped');
    expect(dropped.map((l) => l.rows)).toEqual([2]);
  });

  it('writes tabs, newlines, backslashes and "\\N" as they are, and U+0000 as U+FFFD', async () => {
    const writer = createAuditWriter(writerDb, createLogger('audit-test', 'silent'), {
      flushMs: 60_000,
      batchSize: 10,
    });
    writer.record({ ...row('odd'), method: 'a\tb\nc\\d\re', tool: '\\N', reason: 'x\u0000y' });
    await writer.close();
    const [stored] = await t.db.selectFrom('audit_records').selectAll().execute();
    expect(stored).toMatchObject({ method: 'a\tb\nc\\d\re', tool: '\\N', reason: 'x\uFFFDy' });
  });

  it('writes each row its own columns when only one of them differs from the row before', async () => {
    const writer = createAuditWriter(writerDb, createLogger('audit-test', 'silent'), {
      flushMs: 60_000,
      batchSize: 100,
    });
    const base = row('c0');
    const changes: Array<Partial<AuditRow>> = [
      {},
      { namespace: 'ns-other' },
      { client_id: 'client-2' },
      { method: 'resources/read', tool: null },
      { tool: 'pkgreg.memory.v1.get' },
      { outcome: 'rejected', reason: 'rate_limited', http_status: 429 },
      { reason: 'quota_exceeded' },
      { http_status: 401 },
      { backend: null },
      {},
    ];
    // Each row is the one before with the change: only the changed columns differ.
    const rows: AuditRow[] = [];
    for (const [i, change] of changes.entries()) {
      rows.push({ ...(rows.at(-1) ?? base), ...change, request_id: `c${i}` });
    }
    for (const r of rows) writer.record(r);
    await writer.close();
    const columns = ['request_id', 'namespace', 'client_id', 'method', 'tool', 'outcome', 'reason'] as const;
    const stored = await t.db
      .selectFrom('audit_records')
      .select([...columns, 'http_status', 'backend'])
      .orderBy('at')
      .execute();
    expect(stored).toEqual(
      rows.map((r) => ({
        ...Object.fromEntries(columns.map((c) => [c, r[c]])),
        http_status: r.http_status,
        backend: r.backend,
      })),
    );
  });

  it('writes multi-byte text exactly, and rows longer than a buffer has per row, whole and in order', async () => {
    const writer = createAuditWriter(writerDb, createLogger('audit-test', 'silent'), {
      flushMs: 60_000,
      batchSize: 100,
    });
    // 100 three-byte characters plus a four-byte one: more than the 256 bytes per row a batch buffer
    // is made with, so the batch needs a larger one; every row must land whole, once, in order.
    const wide = `${'語'.repeat(100)}😀`;
    const ids = Array.from({ length: 100 }, (_, i) => `wide-${String(i).padStart(3, '0')}`);
    for (const id of ids) writer.record({ ...row(id), method: wide, tool: 'é\\ü' });
    await writer.close();
    expect(await written()).toEqual(ids);
    const stored = await t.db.selectFrom('audit_records').select(['method', 'tool']).distinct().execute();
    expect(stored).toEqual([{ method: wide, tool: 'é\\ü' }]);
  });

  it('orders the rows of one millisecond by their microsecond digits, in the order they were recorded', async () => {
    const writer = createAuditWriter(writerDb, createLogger('audit-test', 'silent'), {
      flushMs: 60_000,
      batchSize: 2,
    });
    const ms = Date.parse('2026-11-30T03:00:00.123Z');
    // Three rows in one millisecond (across a batch boundary), one in the next, then the clock set back.
    const times = [ms, ms, ms, ms + 1, ms - 5];
    for (const [i, at] of times.entries()) writer.record({ ...row(`t${i}`), at: new Date(at) });
    await writer.close();
    const stored = await sql<{ request_id: string; at: string }>`
      select request_id, to_char(at at time zone 'UTC', 'HH24:MI:SS.US') as at
      from audit_records order by at`.execute(t.db);
    expect(stored.rows).toEqual([
      { request_id: 't4', at: '03:00:00.118000' },
      { request_id: 't0', at: '03:00:00.123000' },
      { request_id: 't1', at: '03:00:00.123001' },
      { request_id: 't2', at: '03:00:00.123002' },
      { request_id: 't3', at: '03:00:00.124000' },
    ]);
  });

  it('beyond 50,000 rows held while the database is away, drops the oldest batches and says how many', async () => {
    const { logger, lines } = capturingLogger();
    const writer = createAuditWriter(writerDb, logger, { flushMs: 60_000, batchSize: 1000 });
    await sql`revoke insert on audit_records from ${role}`.execute(t.db);
    const ids = Array.from({ length: 60_000 }, (_, i) => `h${String(i).padStart(5, '0')}`);
    for (const id of ids) writer.record(row(id));
    await writer.flush();
    // The first full batch (h00000-h00999) is being written, and failing, while the rest are recorded:
    // it is off the buffer then and back at its front after. Each time the buffer passes 50,000 rows it
    // drops whole batches, oldest first, down to nine tenths: at 51,001 rows recorded h01000-h06999, at
    // 57,001 h07000-h12999.
    const failed = lines.filter((l) => l.msg === 'audit write failed') as Array<{
      rows?: number;
      dropped?: number;
    }>;
    expect(failed.at(-1)).toMatchObject({ rows: 48_000, dropped: 12_000 });
    await sql`grant insert on audit_records to ${role}`.execute(t.db);
    await writer.close();
    expect(await written()).toEqual([...ids.slice(0, 1000), ...ids.slice(13_000)]);
  });
});
