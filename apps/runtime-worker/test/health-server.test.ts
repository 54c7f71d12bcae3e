import type { AddressInfo } from 'node:net';
import { TEST_REDIS_URL, testKeyPrefix } from '@pkgreg/db/testing';
import { useTestDatabase } from '@pkgreg/db/vitest';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type HealthServer, startHealthServer } from '../src/health-server.js';
import type { RuntimeWorker } from '../src/worker.js';
import { createTestWorker, freePort } from './helpers.js';

// The worker's probe port (Kubernetes liveness and readiness, infra/k8s): alive while it consumes its
// queues, ready while PostgreSQL and Redis answer.

const tdb = useTestDatabase();
let worker: RuntimeWorker;
let health: HealthServer;
let base: string;

beforeAll(async () => {
  worker = createTestWorker(tdb.db, testKeyPrefix('health'));
  health = await startHealthServer({
    port: 0,
    host: '127.0.0.1',
    db: tdb.db,
    redisUrl: TEST_REDIS_URL,
    workers: worker.workers,
  });
  base = `http://127.0.0.1:${(health.server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await health?.close();
  await worker?.close(1000);
});

it('answers /readyz with both dependencies ok and /healthz while the consumers run', async () => {
  const ready = await fetch(`${base}/readyz`);
  expect(ready.status).toBe(200);
  expect(await ready.json()).toEqual({ status: 'ready', checks: { postgres: 'ok', redis: 'ok' } });
  const alive = await fetch(`${base}/healthz`);
  expect(alive.status).toBe(200);
  expect(await alive.json()).toEqual({ status: 'ok' });
});

it('answers 404 of the documented shape elsewhere', async () => {
  const res = await fetch(`${base}/metrics`);
  expect(res.status).toBe(404);
  expect(((await res.json()) as { error: { code: string } }).error.code).toBe('not_found');
});

it('is not ready while Redis is unreachable', async () => {
  const closedPort = await freePort();
  const other = await startHealthServer({
    port: 0,
    host: '127.0.0.1',
    db: tdb.db,
    redisUrl: `redis://127.0.0.1:${closedPort}`,
    workers: worker.workers,
  });
  try {
    const port = (other.server.address() as AddressInfo).port;
    const res = await fetch(`http://127.0.0.1:${port}/readyz`);
    expect(res.status).toBe(503);
    const body = (await res.json()) as { status: string; checks: Record<string, string> };
    expect(body.status).toBe('unavailable');
    expect(body.checks.postgres).toBe('ok');
    expect(body.checks.redis).not.toBe('ok');
  } finally {
    await other.close();
  }
});

it('fails /healthz once the consumers stopped', async () => {
  await worker.close(1000);
  const res = await fetch(`${base}/healthz`);
  expect(res.status).toBe(503);
  expect(await res.json()).toEqual({ status: 'stopped' });
});
