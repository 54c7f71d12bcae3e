import { setImmediate as nextTurn } from 'node:timers/promises';
import { createPool } from '@pkgreg/db';
import { sql } from 'kysely';
import request from 'supertest';
import { beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../src/app.js';
import { foldAllDownloadDeltas, startDownloadFlusher } from '../src/downloads/download-flusher.js';
import { createDownloadRecorder, type DownloadRecorder } from '../src/downloads/download-recorder.js';
import { loadEnv } from '../src/env.js';
import { insertPackages, packageRow, silentLogger, useTestRegistry } from './fixtures.js';

const t = useTestRegistry({ DETAIL_CACHE_TTL_MS: '0' });

beforeAll(async () => {
  await insertPackages(t.db, [
    packageRow({ scope: 'acme', name: 'hot' }),
    packageRow({ scope: 'acme', name: 'cold' }),
    packageRow({ scope: 'acme', name: 'old', status: 'deprecated' }),
    packageRow({ scope: 'acme', name: 'gone', status: 'delisted' }),
  ]);
});

const downloadCount = async (name: string) =>
  (await request(t.app).get(`/api/packages/@acme/${name}`).expect(200)).body.downloadCount as number;

/** Calls committed and not folded yet, for one package or all: the sum over the batch rows. */
const pendingCalls = async (name?: string) => {
  const result = await sql<{ n: string | null }>`
    select sum(u.n) as n from package_download_batches b
    cross join lateral unnest(b.package_ids, b.counts) as u(package_id, n)
    join packages p on p.id = u.package_id
    where ${name ?? null}::text is null or p.name = ${name ?? null}`.execute(t.db);
  return Number(result.rows[0]?.n ?? 0);
};

const batchRows = async () =>
  Number(
    (
      await t.db
        .selectFrom('package_download_batches')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirst()
    )?.n,
  );

describe('POST /api/packages/@:scope/:name/track (registry-api.md: track)', () => {
  it('200 {ok: true}; downloadCount grows by one after the fold', async () => {
    const before = await downloadCount('cold');
    await request(t.app).post('/api/packages/@acme/cold/track').expect(200, { ok: true });
    await foldAllDownloadDeltas(t.db);
    expect(await downloadCount('cold')).toBe(before + 1);
  });

  it('the delta is durable before the 200 (decisions.md: Registry / Track: no loss on restart)', async () => {
    await request(t.app).post('/api/packages/%40acme/cold/track').expect(200, { ok: true });
    // No fold yet: the answered call already sits committed in package_download_batches, so killing
    // the process now could not lose it.
    expect(await pendingCalls('cold')).toBe(1);
    await foldAllDownloadDeltas(t.db);
  });

  it('a process killed after answering loses nothing: another process folds its deltas (decisions.md: Track)', async () => {
    const before = await downloadCount('old');
    // "Process A": its own recorder answers 200 and is then abandoned without any fold, as if killed.
    const processA = createApp({
      db: t.db,
      redis: t.redis,
      logger: silentLogger,
      env: loadEnv({ DETAIL_CACHE_TTL_MS: '0' }),
    });
    await request(processA).post('/api/packages/@acme/old/track').expect(200, { ok: true });
    await request(processA).post('/api/packages/@acme/old/track').expect(200, { ok: true });
    // "Process B" starts later; its flusher finds the committed deltas.
    const processB = startDownloadFlusher(t.db, silentLogger, 10);
    await processB.stop();
    expect(await downloadCount('old')).toBe(before + 2);
  });

  it('404 {error: "Not found"} for a missing or delisted package; deprecated is counted', async () => {
    await request(t.app).post('/api/packages/@acme/nope/track').expect(404, { error: 'Not found' });
    await request(t.app).post('/api/packages/@acme/gone/track').expect(404, { error: 'Not found' });
    await request(t.app).post('/api/packages/@acme/old/track').expect(200, { ok: true });
  });

  it('400 for an invalid package path', async () => {
    await request(t.app)
      .post('/api/packages/acme/cold/track')
      .expect(400, { error: 'Invalid package path: expected @scope/name' });
  });

  it('N concurrent tracks on one hot package and others: exactly N counted (no lost increment)', async () => {
    const before = { hot: await downloadCount('hot'), cold: await downloadCount('cold') };
    const flusher = startDownloadFlusher(t.db, silentLogger, 20); // folds while the calls run
    const calls = [
      ...Array.from({ length: 300 }, () => request(t.app).post('/api/packages/@acme/hot/track')),
      ...Array.from({ length: 100 }, () => request(t.app).post('/api/packages/@acme/cold/track')),
      ...Array.from({ length: 20 }, () => request(t.app).post('/api/packages/@acme/gone/track')),
    ];
    const statuses = (await Promise.all(calls)).map((r) => r.status);
    await flusher.stop();
    expect(statuses.filter((s) => s === 200)).toHaveLength(400);
    expect(statuses.filter((s) => s === 404)).toHaveLength(20);
    expect(await downloadCount('hot')).toBe(before.hot + 300);
    expect(await downloadCount('cold')).toBe(before.cold + 100);
    expect(await batchRows()).toBe(0);
  });

  it('two recorders and two flushers (two API processes) still count every call once', async () => {
    const before = await downloadCount('hot');
    const recorders = [createDownloadRecorder(t.db), createDownloadRecorder(t.db)];
    const flushers = [
      startDownloadFlusher(t.db, silentLogger, 5),
      startDownloadFlusher(t.db, silentLogger, 7),
    ];
    const results = await Promise.all(
      Array.from({ length: 400 }, (_, i) => recorders[i % 2]?.record('acme', 'hot')),
    );
    await Promise.all(flushers.map((f) => f.stop()));
    expect(results.every(Boolean)).toBe(true);
    expect(await downloadCount('hot')).toBe(before + 400);
  });

  it('several batch INSERTs in flight (TRACK_MAX_IN_FLIGHT) still count every call once', async () => {
    const before = await downloadCount('cold');
    const recorder = createDownloadRecorder(t.db, { maxInFlight: 4, maxBatch: 7 });
    const results = await Promise.all(Array.from({ length: 100 }, () => recorder.record('acme', 'cold')));
    await recorder.drain();
    await foldAllDownloadDeltas(t.db);
    expect(results.every(Boolean)).toBe(true);
    expect(await downloadCount('cold')).toBe(before + 100);
  });

  it('the writer on its own pool (prepared statement, index.ts) counts visible packages and refuses delisted ones', async () => {
    const pool = createPool(t.url, { max: 2 });
    try {
      const before = await downloadCount('old');
      const recorder = createDownloadRecorder(t.db, { pool, maxInFlight: 2, maxBatch: 5 });
      // Enough batches that each connection runs the named statement more than once (prepared, then reused).
      const results = await Promise.all(Array.from({ length: 30 }, () => recorder.record('acme', 'old')));
      const delisted = await recorder.record('acme', 'gone');
      const missing = await recorder.record('acme', 'nope');
      await recorder.drain();
      await foldAllDownloadDeltas(t.db);
      expect(results.every(Boolean)).toBe(true);
      expect([delisted, missing]).toEqual([false, false]);
      expect(await downloadCount('old')).toBe(before + 30);
    } finally {
      await pool.end();
    }
  });

  it('a call is answered only after its batch committed (group commit: one INSERT for a burst)', async () => {
    await foldAllDownloadDeltas(t.db);
    const recorder = createDownloadRecorder(t.db);
    await Promise.all(Array.from({ length: 50 }, () => recorder.record('acme', 'cold')));
    // 50 calls land as far fewer batch rows (one row per batch, same-package calls summed), totalling 50.
    expect(await batchRows()).toBeLessThan(50);
    expect(await pendingCalls('cold')).toBe(50);
    await foldAllDownloadDeltas(t.db);
  });

  describe('after a busy commit the next batch waits for the clients just answered (download-recorder.ts: holdMs)', () => {
    // The hold reads a clock the test moves by hand, and the test waits on the recorder's state one
    // event-loop turn at a time: nothing here depends on how fast this machine commits.
    const handClock = () => {
      let ms = 0;
      return {
        now: () => ms,
        advance: (by: number) => {
          ms += by;
        },
      };
    };

    /** Waits until `call` is answered or held by the recorder (the next batch waiting on the hold). */
    const answeredOrHeld = async (recorder: DownloadRecorder, call: Promise<boolean>) => {
      let answered = false;
      const settle = () => {
        answered = true;
      };
      call.then(settle, settle);
      // A turn first: the recorder reacts to the call (a batch, or the hold's next poll) on setImmediate.
      for (;;) {
        await nextTurn();
        if (answered) return 'answered';
        if (recorder.backlog?.().holding) return 'held';
      }
    };

    /**
     * Ten calls at once, then the same ten clients back one by one, each once the one before was
     * answered or is held, the clock moved `stepMs` before each: batch rows the second wave wrote, and
     * how many of its calls were answered before its last one came.
     */
    const twoWaves = async (options: { holdMs: number; stepMs: number }) => {
      await foldAllDownloadDeltas(t.db);
      const clock = handClock();
      const recorder = createDownloadRecorder(t.db, { holdMs: options.holdMs, now: clock.now });
      await Promise.all(Array.from({ length: 10 }, () => recorder.record('acme', 'cold')));
      // The hold starts once the first batch's answers are out (its clients are now coming back).
      if (options.holdMs > 0) while (!recorder.backlog?.().holding) await nextTurn();
      const before = await batchRows();
      let answered = 0;
      const wave: Promise<boolean>[] = [];
      for (let i = 0; i < 10; i += 1) {
        clock.advance(options.stepMs);
        const call = recorder.record('acme', 'cold');
        call.then(() => {
          answered += 1;
        });
        wave.push(call);
        if (i === 9) break;
        await answeredOrHeld(recorder, call);
      }
      const answeredBeforeLast = answered;
      expect((await Promise.all(wave)).every(Boolean)).toBe(true);
      const rows = (await batchRows()) - before;
      expect(await pendingCalls('cold')).toBe(20);
      await foldAllDownloadDeltas(t.db);
      return { rows, answeredBeforeLast };
    };

    it('one commit for the whole second wave when they come back within the hold; one each without it', async () => {
      // 10 steps of 20 ms: the last client comes back 200 ms into a hold of 300.
      expect(await twoWaves({ holdMs: 300, stepMs: 20 })).toEqual({ rows: 1, answeredBeforeLast: 0 });
      expect(await twoWaves({ holdMs: 0, stepMs: 20 })).toEqual({ rows: 10, answeredBeforeLast: 9 });
    });

    it('never after a small batch (an idle server adds no delay), and never past holdMs', async () => {
      await foldAllDownloadDeltas(t.db);
      // The clock never moves: a call that waited on the hold would never be answered.
      const idle = createDownloadRecorder(t.db, { holdMs: 5000, now: handClock().now });
      await Promise.all(Array.from({ length: 3 }, () => idle.record('acme', 'cold')));
      const lone = idle.record('acme', 'cold');
      expect(await answeredOrHeld(idle, lone)).toBe('answered');
      expect(await lone).toBe(true);

      // After a batch of 10, one client comes back: it waits out the hold (the other nine never do).
      const clock = handClock();
      const busy = createDownloadRecorder(t.db, { holdMs: 300, now: clock.now });
      await Promise.all(Array.from({ length: 10 }, () => busy.record('acme', 'cold')));
      const straggler = busy.record('acme', 'cold');
      expect(await answeredOrHeld(busy, straggler)).toBe('held');
      clock.advance(299);
      for (let i = 0; i < 20; i += 1) await nextTurn(); // the hold polls once a turn
      expect(await answeredOrHeld(busy, straggler)).toBe('held');
      expect(busy.backlog?.()).toEqual({ waiting: 1, inFlight: 0, holding: true });
      clock.advance(1);
      expect(await straggler).toBe(true);
      expect(busy.backlog?.().holding).toBe(false);
      expect(await pendingCalls('cold')).toBe(15);

      // Shutdown during a hold writes what waits at once (drain), instead of waiting out the hold.
      const stopping = createDownloadRecorder(t.db, { holdMs: 5000, now: handClock().now });
      await Promise.all(Array.from({ length: 10 }, () => stopping.record('acme', 'cold')));
      const late = stopping.record('acme', 'cold');
      expect(await answeredOrHeld(stopping, late)).toBe('held');
      await stopping.drain();
      expect(await late).toBe(true);
      await foldAllDownloadDeltas(t.db);
    });
  });

  it('array literals built by hand: a package named "null" is a name, not a NULL; a quote is refused', async () => {
    await insertPackages(t.db, [packageRow({ scope: 'acme', name: 'null' })]);
    const recorder = createDownloadRecorder(t.db);
    const [named, other] = await Promise.all([
      recorder.record('acme', 'null'),
      recorder.record('acme', 'cold'),
    ]);
    expect([named, other]).toEqual([true, true]);
    expect(await pendingCalls('null')).toBe(1);
    await expect(recorder.record('ac"me', 'x')).rejects.toThrow(/quote or backslash/);
    await foldAllDownloadDeltas(t.db);
  });

  describe('ids the recorder already knows (downloads.repository.ts: list-change generation)', () => {
    it('a package delisted after the recorder learned its id is refused at once: 404, not counted', async () => {
      await insertPackages(t.db, [packageRow({ scope: 'acme', name: 'soon-gone' })]);
      const recorder = createDownloadRecorder(t.db);
      expect(await recorder.record('acme', 'soon-gone')).toBe(true); // looked up, id learned
      expect(await recorder.record('acme', 'soon-gone')).toBe(true); // counted by its known id
      await t.db
        .updateTable('packages')
        .set({ status: 'delisted' })
        .where('name', '=', 'soon-gone')
        .execute();
      expect(await recorder.record('acme', 'soon-gone')).toBe(false);
      expect(await pendingCalls('soon-gone')).toBe(2);
      await foldAllDownloadDeltas(t.db);
    });

    it('a package deleted after the recorder learned its id is refused, and the fold skips its counts', async () => {
      await insertPackages(t.db, [packageRow({ scope: 'acme', name: 'deleted-later' })]);
      const recorder = createDownloadRecorder(t.db);
      expect(await recorder.record('acme', 'deleted-later')).toBe(true);
      await t.db.deleteFrom('packages').where('name', '=', 'deleted-later').execute();
      expect(await recorder.record('acme', 'deleted-later')).toBe(false);
      // The batch row of the first call names a package that no longer exists: folded away, no error.
      expect(await foldAllDownloadDeltas(t.db)).toBeGreaterThan(0);
      expect(await batchRows()).toBe(0);
    });

    it('known and unknown packages in one batch: each counted once, unknown misses refused', async () => {
      const recorder = createDownloadRecorder(t.db);
      await recorder.record('acme', 'hot'); // learn hot's id
      const before = { hot: await downloadCount('hot'), cold: await downloadCount('cold') };
      await foldAllDownloadDeltas(t.db);
      const results = await Promise.all([
        ...Array.from({ length: 20 }, () => recorder.record('acme', 'hot')),
        ...Array.from({ length: 5 }, () => recorder.record('acme', 'cold')),
        recorder.record('acme', 'nope'),
        recorder.record('acme', 'gone'),
      ]);
      await foldAllDownloadDeltas(t.db);
      expect(results.filter(Boolean)).toHaveLength(25);
      expect(results.slice(-2)).toEqual([false, false]);
      expect(await downloadCount('hot')).toBe(before.hot + 1 + 20);
      expect(await downloadCount('cold')).toBe(before.cold + 5);
    });
  });
});
