import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { poolOf } from '@pkgreg/db';
import { TEST_REDIS_URL, testKeyPrefix } from '@pkgreg/db/testing';
import { useTestDatabase } from '@pkgreg/db/vitest';
import {
  closeServer,
  createMetricsRegistry,
  listen,
  type MetricsServer,
  startMetricsServer,
} from '@pkgreg/server-kit';
import express from 'express';
import { Redis } from 'ioredis';
import { sql } from 'kysely';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRegistry, type Registry } from '../src/app.js';
import { foldAllDownloadDeltas } from '../src/downloads/download-flusher.js';
import { loadEnv } from '../src/env.js';
import { errorHandler, notFoundHandler } from '../src/http/error-handler.js';
import { createRegistryMetrics } from '../src/metrics.js';
import { webStatic } from '../src/web-static.js';
import { insertPackages, packageRow, silentLogger } from './fixtures.js';

// Issue 22, "See it": the registry's Prometheus metrics on an operator port of their own. Requests go
// through the real public listener; the scrape reads the real metrics listener.

const t = useTestDatabase();
const SECRET = 'ghp_secretTokenValue123';
let redis: Redis;
let registry: Registry;
let publicServer: Server;
let publicUrl: string;
let metricsServer: MetricsServer;

beforeAll(async () => {
  redis = new Redis(TEST_REDIS_URL, { keyPrefix: `${testKeyPrefix('registry-metrics')}:` });
  await insertPackages(t.db, [packageRow({ scope: 'acme', name: 'hot' })]);
  const metrics = createRegistryMetrics(createMetricsRegistry({ processMetrics: true }));
  registry = createRegistry({
    db: t.db,
    redis,
    logger: silentLogger,
    env: loadEnv({ DETAIL_CACHE_TTL_MS: '0' }),
    metrics,
  });
  publicServer = await listen(registry.handler, 0, '127.0.0.1');
  publicUrl = `http://127.0.0.1:${(publicServer.address() as AddressInfo).port}`;
  metricsServer = await startMetricsServer({
    registry: metrics.registry,
    port: 0,
    host: '127.0.0.1',
    logger: silentLogger,
  });
});

afterAll(async () => {
  await metricsServer?.close();
  if (publicServer) await closeServer(publicServer);
  redis?.disconnect();
});

/** Scrapes the metrics listener: the exposition text and each sample's value by its full series name. */
async function scrape(): Promise<{ text: string; value(series: string): number | undefined }> {
  const res = await fetch(`http://127.0.0.1:${metricsServer.port}/metrics`);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  const text = await res.text();
  const samples = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const at = line.lastIndexOf(' ');
    samples.set(line.slice(0, at), Number(line.slice(at + 1)));
  }
  return { text, value: (series) => samples.get(series) };
}

const DETAIL = '/api/packages/:scope/:name';
const detailOk = `pkgreg_http_request_duration_seconds_count{method="GET",route="${DETAIL}",status_class="2xx"}`;

describe('registry metrics', () => {
  it('counts requests per route template and status class, and rejects by error code', async () => {
    const before = await scrape();
    await request(publicUrl).get('/api/packages/@acme/hot').expect(200);
    await request(publicUrl).get('/api/packages/@acme/hot/skill-md').expect(200);
    await request(publicUrl).post('/api/packages/@acme/hot/track').expect(200);
    await request(publicUrl).get('/api/packages/@acme/missing').expect(404);
    await request(publicUrl).get('/api/packages').query({ q: SECRET }).expect(200);
    await request(publicUrl).get('/api/no-such-route').set('Authorization', `Bearer ${SECRET}`).expect(404);

    // HTTP observations are made when each response closes, just after the client has read it.
    const total = (x: Awaited<ReturnType<typeof scrape>>) =>
      [...x.text.matchAll(/^pkgreg_http_request_duration_seconds_count\{.*\} (\d+)$/gm)].reduce(
        (sum, m) => sum + Number(m[1]),
        0,
      );
    let after = await scrape();
    while (total(after) < total(before) + 6) after = await scrape();
    const delta = (series: string) => (after.value(series) ?? 0) - (before.value(series) ?? 0);
    expect(delta(detailOk)).toBe(1);
    expect(
      delta(
        'pkgreg_http_request_duration_seconds_count{method="GET",route="/api/packages/:scope/:name/skill-md",status_class="2xx"}',
      ),
    ).toBe(1);
    expect(
      delta(
        'pkgreg_http_request_duration_seconds_count{method="POST",route="/api/packages/:scope/:name/track",status_class="2xx"}',
      ),
    ).toBe(1);
    expect(
      delta(`pkgreg_http_request_duration_seconds_count{method="GET",route="${DETAIL}",status_class="4xx"}`),
    ).toBe(1);
    expect(
      delta(
        'pkgreg_http_request_duration_seconds_count{method="GET",route="/api/packages",status_class="2xx"}',
      ),
    ).toBe(1);
    expect(delta(`pkgreg_http_rejects_total{route="${DETAIL}",reason="not_found"}`)).toBe(1);
    expect(delta('pkgreg_http_rejects_total{route="unmatched",reason="not_found"}')).toBe(1);
    // The latency histogram's +Inf bucket holds every observation.
    const inf = [
      ...after.text.matchAll(/^pkgreg_http_request_duration_seconds_bucket\{(.*)\} (\d+)$/gm),
    ].find(
      ([, labels]) =>
        labels?.includes('le="+Inf"') &&
        labels.includes(`route="${DETAIL}"`) &&
        labels.includes('method="GET"') &&
        labels.includes('status_class="2xx"'),
    );
    expect(Number(inf?.[2])).toBe(after.value(detailOk));
  });

  it('never puts a token, a path or a package name in a label', async () => {
    const { text } = await scrape();
    expect(text).not.toContain(SECRET);
    expect(text).not.toContain('@acme');
    expect(text).not.toContain('/hot');
    expect(text).not.toContain('no-such-route');
    // Every route label is a template (or `unmatched`).
    for (const [, route] of text.matchAll(/route="([^"]*)"/g)) {
      expect(route === 'unmatched' || route?.startsWith('/')).toBe(true);
      expect(route).not.toMatch(/@|%40/);
    }
  });

  it('reports the pool, Redis round trips and process metrics', async () => {
    await request(publicUrl).get('/readyz').expect(200);
    const { value, text } = await scrape();
    expect(value('pkgreg_db_pool_max_connections{pool="main"}')).toBe(poolOf(t.db)?.options.max);
    expect(value('pkgreg_db_pool_connections{pool="main",state="idle"}')).toBeGreaterThan(0);
    expect(value('pkgreg_db_pool_waiting_clients{pool="main"}')).toBe(0);
    expect(value('pkgreg_db_pool_acquire_seconds_count{pool="main"}')).toBeGreaterThan(0);
    expect(value('pkgreg_redis_command_duration_seconds_count{command="ping"}')).toBeGreaterThan(0);
    expect(text).toContain('process_cpu_user_seconds_total');
    expect(text).toContain('nodejs_eventloop_lag_seconds');
  });

  it('reports the track backlog and the fold lag', async () => {
    await foldAllDownloadDeltas(t.db);
    expect((await scrape()).value('pkgreg_download_fold_lag_seconds')).toBe(0);
    const [row] = (await sql<{ id: string }>`select id from packages where name = 'hot'`.execute(t.db)).rows;
    await sql`insert into package_download_batches (package_ids, counts, created_at)
      values (array[${row?.id}]::uuid[], array[1], now() - interval '90 seconds')`.execute(t.db);
    const { value } = await scrape();
    expect(value('pkgreg_download_fold_lag_seconds')).toBeGreaterThanOrEqual(90);
    expect(value('pkgreg_track_waiting_calls')).toBe(0);
    expect(value('pkgreg_track_inflight_batches')).toBe(0);
    await foldAllDownloadDeltas(t.db);
    expect((await scrape()).value('pkgreg_download_fold_lag_seconds')).toBe(0);
  });

  it('serves nothing but GET /metrics on the metrics listener', async () => {
    const res = await fetch(`http://127.0.0.1:${metricsServer.port}/api/packages`);
    expect(res.status).toBe(404);
  });
});

describe('the public port has no /metrics', () => {
  it('answers /metrics with the API 404 body, not the web UI', async () => {
    const res = await request(publicUrl).get('/metrics').expect(404);
    expect(res.body).toEqual({ error: 'Not found' });
    expect(res.headers['content-type']).toMatch(/application\/json/);
  });

  it('the SPA fallback of a built UI leaves /metrics to the 404 handler', async () => {
    const dist = mkdtempSync(path.join(tmpdir(), 'pkgreg-metrics-web-'));
    try {
      writeFileSync(path.join(dist, 'index.html'), '<!doctype html><div id="app"></div>');
      const app = express();
      app.use(webStatic({ distDir: dist }));
      app.use(notFoundHandler());
      app.use(errorHandler(silentLogger));
      await request(app).get('/some/page').expect(200);
      const res = await request(app).get('/metrics').expect(404);
      expect(res.body).toEqual({ error: 'Not found' });
    } finally {
      rmSync(dist, { recursive: true, force: true });
    }
  });
});
