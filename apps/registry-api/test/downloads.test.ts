import { createPool } from '@pkgreg/db';
import { sql } from 'kysely';
import request from 'supertest';
import { beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../src/app.js';
import { foldAllDownloadDeltas, startDownloadFlusher } from '../src/downloads/download-flusher.js';
import { createDownloadRecorder } from '../src/downloads/download-recorder.js';
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
    /**
     * Ten calls at once, then the same ten clients back one by one, `gapMs` apart; batch rows the
     * second wave wrote.
     */
    const twoWaves = async (holdMs: number, gapMs: number) => {
      await foldAllDownloadDeltas(t.db);
      const recorder = createDownloadRecorder(t.db, { holdMs });
      await Promise.all(Array.from({ length: 10 }, () => recorder.record('acme', 'cold')));
      const before = await batchRows();
      const wave = Array.from({ length: 10 }, (_, i) =>
        new Promise((resolve) => setTimeout(resolve, gapMs * i)).then(() => recorder.record('acme', 'cold')),
      );
      expect((await Promise.all(wave)).every(Boolean)).toBe(true);
      const rows = (await batchRows()) - before;
      expect(await pendingCalls('cold')).toBe(20);
      await foldAllDownloadDeltas(t.db);
      return rows;
    };

    it('one commit for the whole second wave when they come back within the hold; one each without it', async () => {
      // The gap between returning clients comes from this machine's commit time, so that without a
      // hold each client finds the previous commit done even while other work loads the machine.
      await foldAllDownloadDeltas(t.db);
      const lone = createDownloadRecorder(t.db, { holdMs: 0 });
      const times: number[] = [];
      for (let i = 0; i < 5; i += 1) {
        const started = performance.now();
        await lone.record('acme', 'cold');
        times.push(performance.now() - started);
      }
      await foldAllDownloadDeltas(t.db);
      const commitMs = times.sort((a, b) => a - b)[2] ?? 1;
      const gapMs = Math.max(2, Math.ceil(3 * commitMs));
      expect(await twoWaves(20 * gapMs + 500, gapMs)).toBe(1);
      expect(await twoWaves(0, gapMs)).toBeGreaterThan(3);
    });

    it('never after a small batch (an idle server adds no delay), and never past holdMs', async () => {
      await foldAllDownloadDeltas(t.db);
      const idle = createDownloadRecorder(t.db, { holdMs: 5000 });
      await Promise.all(Array.from({ length: 3 }, () => idle.record('acme', 'cold')));
      let started = performance.now();
      expect(await idle.record('acme', 'cold')).toBe(true);
      expect(performance.now() - started).toBeLessThan(2500);

      // After a batch of 10, one client comes back: it waits out the hold (the other nine never do).
      const busy = createDownloadRecorder(t.db, { holdMs: 300 });
      await Promise.all(Array.from({ length: 10 }, () => busy.record('acme', 'cold')));
      started = performance.now();
      expect(await busy.record('acme', 'cold')).toBe(true);
      const waited = performance.now() - started;
      expect(waited).toBeGreaterThanOrEqual(200);
      expect(waited).toBeLessThan(5000);
      expect(await pendingCalls('cold')).toBe(15);

      // Shutdown during a hold writes what waits at once (drain), instead of waiting out the hold.
      const stopping = createDownloadRecorder(t.db, { holdMs: 5000 });
      await Promise.all(Array.from({ length: 10 }, () => stopping.record('acme', 'cold')));
      const late = stopping.record('acme', 'cold');
      started = performance.now();
      await stopping.drain();
      expect(await late).toBe(true);
      expect(performance.now() - started).toBeLessThan(2500);
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
