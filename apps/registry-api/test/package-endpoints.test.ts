import { setTimeout as sleep } from 'node:timers/promises';
import { createDb } from '@pkgreg/db';
import { until } from '@pkgreg/testing';
import { sql } from 'kysely';
import pino from 'pino';
import request from 'supertest';
import { beforeAll, describe, expect, it } from 'vitest';
import { ANONYMOUS } from '../src/accounts/viewer.js';
import { createApp, createRegistry } from '../src/app.js';
import { foldAllDownloadDeltas } from '../src/downloads/download-flusher.js';
import { createDownloadRecorder, type DownloadRecorder } from '../src/downloads/download-recorder.js';
import { loadEnv } from '../src/env.js';
import { cachePolicy } from '../src/http/cache-policy.js';
import { createPackageEndpoints } from '../src/packages/package-endpoints.js';
import { insertPackages, packageRow, silentLogger, useTestRegistry } from './fixtures.js';

// Detail, skill-md and track are answered before Express (src/packages/package-endpoints.ts), hit or
// miss, success or error; everything else goes to the Express app. These tests hold them to the
// contract (registry-api.md: detail, skill-md, track; decisions.md: Registry / ETag, Track) and to
// the error body and request id every other route has.

const TTL_MS = 1500;
const t = useTestRegistry({ DETAIL_CACHE_TTL_MS: String(TTL_MS) });

beforeAll(async () => {
  await insertPackages(t.db, [
    packageRow({ scope: 'acme', name: 'lane-skill', description: 'Served from the cache' }),
    packageRow({ scope: 'acme', name: 'changing' }),
    packageRow({ scope: 'acme', name: 'leaving' }),
    packageRow({ scope: 'acme', name: 'stale-limit' }),
    packageRow({ scope: 'acme', name: 'tracked' }),
    packageRow({ scope: 'acme', name: 'hidden', status: 'delisted' }),
  ]);
});

const SAME_HEADERS = ['etag', 'cache-control', 'content-type', 'content-length'];

describe('detail and skill-md (registry-api.md: detail, skill-md; decisions.md: ETag)', () => {
  it('a hit has the body and headers the miss had', async () => {
    const miss = await request(t.app).get('/api/packages/@acme/lane-skill').expect(200);
    const hit = await request(t.app).get('/api/packages/%40acme/lane-skill').expect(200);
    expect(hit.text).toBe(miss.text);
    for (const header of SAME_HEADERS) expect(hit.headers[header]).toBe(miss.headers[header]);
    expect(hit.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);

    const mdMiss = await request(t.app).get('/api/packages/@acme/lane-skill/skill-md').expect(200);
    const mdHit = await request(t.app).get('/api/packages/@acme/lane-skill/skill-md').expect(200);
    expect(mdHit.text).toBe(mdMiss.text);
    expect(mdHit.headers['content-type']).toBe('text/markdown; charset=utf-8');
    for (const header of SAME_HEADERS) expect(mdHit.headers[header]).toBe(mdMiss.headers[header]);
  });

  it('keeps a plain X-Request-Id and replaces one that could smuggle anything into logs', async () => {
    await request(t.app).get('/api/packages/@acme/lane-skill').expect(200);
    const kept = await request(t.app).get('/api/packages/@acme/lane-skill').set('X-Request-Id', 'req-7.a:b');
    expect(kept.headers['x-request-id']).toBe('req-7.a:b');
    const replaced = await request(t.app).get('/api/packages/@acme/lane-skill').set('X-Request-Id', 'a b');
    expect(replaced.headers['x-request-id']).not.toBe('a b');
  });

  it('answers 304 to a matching If-None-Match (W/ ignored, * matches) and HEAD without a body', async () => {
    const first = await request(t.app).get('/api/packages/@acme/lane-skill').expect(200);
    const etag = first.headers.etag as string;
    for (const header of [etag, `W/${etag}`, `"other", ${etag}`, '*']) {
      const res = await request(t.app).get('/api/packages/@acme/lane-skill').set('If-None-Match', header);
      expect(res.status).toBe(304);
      expect(res.headers.etag).toBe(etag);
      expect(res.text ?? '').toBe('');
    }
    await request(t.app).get('/api/packages/@acme/lane-skill').set('If-None-Match', '"other"').expect(200);
    const head = await request(t.app).head('/api/packages/@acme/lane-skill').expect(200);
    expect(head.headers['content-length']).toBe(first.headers['content-length']);
    expect(head.text ?? '').toBe('');
  });

  it('queries, unknown tails, bad paths and delisted packages get their documented answers', async () => {
    await request(t.app).get('/api/packages/@acme/lane-skill').expect(200);
    await request(t.app).get('/api/packages/@acme/lane-skill?x=1').expect(200);
    await request(t.app).get('/api/packages/@acme/lane-skill/unknown').expect(404, { error: 'Not found' });
    await request(t.app)
      .get('/api/packages/acme/lane-skill')
      .expect(400, { error: 'Invalid package path: expected @scope/name' });
    await request(t.app).get('/api/packages/@acme/hidden').expect(404, { error: 'Package not found' });
    await request(t.app).delete('/api/packages/@acme/lane-skill').expect(404, { error: 'Not found' });
  });
});

describe('what the endpoints answer and what goes to Express (src/packages/package-endpoints.ts)', () => {
  it('detail, skill-md and track never reach Express, hit or miss, 404 or body; other routes do', async () => {
    const parts = createRegistry({
      db: t.db,
      redis: t.redis,
      logger: silentLogger,
      env: loadEnv({ DETAIL_CACHE_TTL_MS: '60000' }),
    });
    let handedOn = 0;
    const endpoints = createPackageEndpoints({
      app: (req, res) => {
        handedOn += 1;
        parts.express(req, res);
      },
      cache: parts.cache,
      recorder: parts.recorder,
      admission: parts.admission,
      logger: silentLogger,
      caching: cachePolicy(loadEnv({})),
      viewerOf: async () => ANONYMOUS,
      db: t.db,
    });
    await request(endpoints).get('/api/packages/@acme/lane-skill').expect(200); // a miss, read here
    await request(endpoints).get('/api/packages/@acme/lane-skill').expect(200);
    await request(endpoints).get('/api/packages/%40acme/lane-skill/skill-md').expect(200);
    await request(endpoints).head('/api/packages/@acme/lane-skill').expect(200);
    await request(endpoints).post('/api/packages/@acme/tracked/track').expect(200, { ok: true });
    await request(endpoints).post('/api/packages/@acme/nope/track').expect(404, { error: 'Not found' });
    await request(endpoints).post('/api/packages/@acme/tracked/track').send({ a: 1 }).expect(200);
    await request(endpoints).get('/api/packages/@acme/lane-skill?x=1').expect(200);
    await request(endpoints).get('/api/packages/@acme/%6Cane-skill').expect(200);
    await request(endpoints).get('/api/packages/@acme/nope').expect(404, { error: 'Package not found' });
    expect(handedOn).toBe(0);
    await request(endpoints).get('/api/packages/@acme/lane-skill/source').expect(302);
    await request(endpoints)
      .get('/api/packages/@acme/lane-skill/unknown')
      .expect(404, { error: 'Not found' });
    await request(endpoints).get('/api/packages').expect(200);
    expect(handedOn).toBe(3);
    await foldAllDownloadDeltas(t.db);
  });
});

describe('the micro-cache past its TTL (docs/decisions.md: detail at most 2 x DETAIL_CACHE_TTL_MS behind)', () => {
  const etagOf = async (name: string) =>
    (await request(t.app).get(`/api/packages/@acme/${name}`).expect(200)).headers.etag as string;

  it('an unchanged package keeps its bytes; a changed one is served stale once, then the new version', async () => {
    const before = await etagOf('changing');
    await sleep(TTL_MS + 100);
    expect(await etagOf('changing')).toBe(before); // expired, revalidated in the background: unchanged
    await t.cache.settled(); // that revalidation has run before the row changes
    await t.db.updateTable('packages').set({ repo_stars: 99 }).where('name', '=', 'changing').execute();
    await sleep(TTL_MS + 100);
    expect(await etagOf('changing')).toBe(before); // stale-while-revalidate: the old bytes, this once
    await until(async () => (await etagOf('changing')) !== before);
    const res = await request(t.app).get('/api/packages/@acme/changing').expect(200);
    expect(res.body.repoStars).toBe(99);
  });

  it('a package delisted behind a cached entry turns 404 after the revalidation', async () => {
    await etagOf('leaving');
    await t.db.updateTable('packages').set({ status: 'delisted' }).where('name', '=', 'leaving').execute();
    await sleep(TTL_MS + 100);
    await until(async () => (await request(t.app).get('/api/packages/@acme/leaving')).status === 404);
    await request(t.app).get('/api/packages/@acme/leaving').expect(404, { error: 'Package not found' });
  });

  it('an entry older than 2 x TTL is never served: the request reads the database', async () => {
    const before = await etagOf('stale-limit');
    await t.db.updateTable('packages').set({ repo_stars: 12 }).where('name', '=', 'stale-limit').execute();
    await sleep(2 * TTL_MS + 100);
    expect(await etagOf('stale-limit')).not.toBe(before);
  });
});

describe('track (registry-api.md: track; decisions.md: Track)', () => {
  const pending = async (name: string) => {
    const result = await sql<{ n: string | null }>`
      select sum(u.n) as n from package_download_batches b
      cross join lateral unnest(b.package_ids, b.counts) as u(package_id, n)
      join packages p on p.id = u.package_id where p.name = ${name}`.execute(t.db);
    return Number(result.rows[0]?.n ?? 0);
  };

  it('a body-less call is 200 {ok: true} with a request id, counted once', async () => {
    await foldAllDownloadDeltas(t.db);
    const res = await request(t.app).post('/api/packages/@acme/tracked/track').set('X-Request-Id', 'trk-1');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ok: true });
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(res.headers['x-request-id']).toBe('trk-1');
    expect(await pending('tracked')).toBe(1);
    await foldAllDownloadDeltas(t.db);
  });

  it('404 and 400 have the documented bodies, and nothing is counted', async () => {
    await request(t.app).post('/api/packages/@acme/nope/track').expect(404, { error: 'Not found' });
    await request(t.app).post('/api/packages/@acme/hidden/track').expect(404, { error: 'Not found' });
    await request(t.app)
      .post('/api/packages/@Acme/tracked/track')
      .expect(400, { error: 'Invalid package path: expected @scope/name' });
    expect(await pending('hidden')).toBe(0);
  });

  it('a call with a JSON body is parsed (bad JSON is a 400) and counted the same way', async () => {
    await foldAllDownloadDeltas(t.db);
    await request(t.app)
      .post('/api/packages/@acme/tracked/track')
      .send({ source: 'cli' })
      .expect(200, { ok: true });
    expect(await pending('tracked')).toBe(1);
    await request(t.app)
      .post('/api/packages/@acme/tracked/track')
      .set('Content-Type', 'application/json')
      .send('{"source":')
      .expect(400, { error: 'Malformed JSON body' });
    expect(await pending('tracked')).toBe(1);
    await foldAllDownloadDeltas(t.db);
  });

  it('a database outage is a 503 {error} with Retry-After, and the call is recorded once, not retried', async () => {
    const lines: string[] = [];
    const broken = createDb('postgres://postgres@127.0.0.1:1/none', { max: 1 });
    const real = createDownloadRecorder(broken);
    let attempts = 0;
    const counting: DownloadRecorder = {
      record: (scope, name) => {
        attempts += 1;
        return real.record(scope, name);
      },
      drain: () => real.drain(),
    };
    const failing = createApp({
      db: broken,
      redis: t.redis,
      logger: pino({ level: 'info' }, { write: (line: string) => lines.push(line) }),
      env: loadEnv({}),
      recorder: counting,
    });
    const res = await request(failing)
      .post('/api/packages/@acme/tracked/track')
      .set('X-Request-Id', 'trk-503');
    expect(res.status).toBe(503);
    expect(res.headers['retry-after']).toBe('1');
    expect(res.body).toEqual({ error: 'Service temporarily unavailable, try again shortly' });
    expect(attempts).toBe(1);
    // The outage is logged once, without a stack; no "request failed" per call.
    expect(lines.filter((line) => line.includes('"msg":"postgres unavailable"'))).toHaveLength(1);
    expect(lines.some((line) => line.includes('request failed'))).toBe(false);
    await broken.destroy();
  });
});
