import { createServer, type Server, type Socket } from 'node:net';
import { createDb } from '@pkgreg/db';
import { createTestDatabase, TEST_REDIS_URL, type TestDatabase, testKeyPrefix } from '@pkgreg/db/testing';
import { freePort } from '@pkgreg/testing';
import express from 'express';
import { Redis } from 'ioredis';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkReadiness, healthRoutes } from '../src/index.js';

// Readiness against the real Postgres and Redis (COMMON.md: never mock the DB), and against ports that
// refuse or never answer, which must give a reason within the timeout rather than hang a probe.

let t: TestDatabase;
let redis: Redis;
const cleanups: (() => Promise<unknown> | unknown)[] = [];

beforeAll(async () => {
  t = await createTestDatabase();
  redis = new Redis(TEST_REDIS_URL, { keyPrefix: `${testKeyPrefix('server-kit-health')}:` });
});

afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
  redis?.disconnect();
  await t?.destroy();
});

/** A port that accepts connections and never says a word (a hung dependency). */
async function silentPort(): Promise<number> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => {});
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(async () => {
    for (const s of sockets) s.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return (server.address() as { port: number }).port;
}

function unreachableRedis(port: number): Redis {
  const client = new Redis({ host: '127.0.0.1', port, lazyConnect: false });
  client.on('error', () => {}); // connection errors are expected here
  cleanups.push(() => client.disconnect());
  return client;
}

describe('checkReadiness (server-kit health)', () => {
  it('real Postgres and Redis up → ok', async () => {
    const result = await checkReadiness({ db: t.db, redis, timeoutMs: 2000 });
    expect(result).toEqual({ ok: true, checks: { postgres: 'ok', redis: 'ok' } });
  });

  it('Redis on a refusing port → not ok with a reason, within the timeout', async () => {
    const down = unreachableRedis(await freePort());
    const result = await checkReadiness({ db: t.db, redis: down, timeoutMs: 500 });
    expect(result.ok).toBe(false);
    expect(result.checks.postgres).toBe('ok');
    expect(result.checks.redis).not.toBe('ok');
    expect(result.checks.redis?.length).toBeGreaterThan(0);
    // Ended by the refusal or by the check's own timer (ioredis queues the ping while it reconnects),
    // never by ioredis giving up after its retries: the reason says which, no clock needs reading.
    expect(result.checks.redis).toMatch(/^timed out after 500 ms$|ECONNREFUSED/);
  });

  it('Redis that never answers → "timed out" within the timeout', async () => {
    const hung = unreachableRedis(await silentPort());
    const started = Date.now();
    const result = await checkReadiness({ db: t.db, redis: hung, timeoutMs: 300 });
    const elapsed = Date.now() - started;
    expect(result.ok).toBe(false);
    // The check's own timer ended it (its message says so), and not before its time: no upper bound on
    // the clock is needed, as a check that hung would never answer.
    expect(result.checks.redis).toBe('timed out after 300 ms');
    expect(elapsed).toBeGreaterThanOrEqual(290);
  });

  it('Postgres on a refusing port → not ok with a reason; Redis still ok', async () => {
    const db = createDb(`postgres://postgres@127.0.0.1:${await freePort()}/pkgreg`, { max: 1 });
    cleanups.push(() => db.destroy());
    const result = await checkReadiness({ db, redis, timeoutMs: 1000 });
    expect(result.ok).toBe(false);
    expect(result.checks.redis).toBe('ok');
    expect(result.checks.postgres).toMatch(/ECONNREFUSED|connect/);
  });
});

describe('healthRoutes: /healthz and /readyz', () => {
  it('/healthz answers 200 {status: ok}', async () => {
    const app = express().use(healthRoutes({ db: t.db, redis }));
    const res = await request(app).get('/healthz');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'ok' });
  });

  it('/readyz answers 200 when both answer', async () => {
    const app = express().use(healthRoutes({ db: t.db, redis }));
    const res = await request(app).get('/readyz');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'ready', checks: { postgres: 'ok', redis: 'ok' } });
  });

  it('/readyz answers 503 with the failing check when Redis is down', async () => {
    const down = unreachableRedis(await freePort());
    const app = express().use(healthRoutes({ db: t.db, redis: down, timeoutMs: 300 }));
    const res = await request(app).get('/readyz');
    expect(res.status).toBe(503);
    expect(res.body.status).toBe('unavailable');
    expect(res.body.checks.postgres).toBe('ok');
    expect(res.body.checks.redis).not.toBe('ok');
  });
});
