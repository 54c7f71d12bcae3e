import { createTestDatabase, TEST_REDIS_URL, type TestDatabase } from '@pkgreg/db/testing';
import { createLogger } from '@pkgreg/server-kit';
import { Redis } from 'ioredis';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../src/app.js';
import { loadEnv } from '../src/env.js';

let t: TestDatabase;
let redis: Redis;
beforeAll(async () => {
  t = await createTestDatabase();
  redis = new Redis(TEST_REDIS_URL);
});
afterAll(async () => {
  redis?.disconnect();
  await t?.destroy();
});

describe('health (issue 2: /healthz alive, /readyz Postgres and Redis reachable)', () => {
  it('answers /healthz and /readyz 200 when Postgres and Redis are up', async () => {
    const app = createApp({ db: t.db, redis, logger: createLogger('test', 'silent'), env: loadEnv({}) });
    await request(app).get('/healthz').expect(200, { status: 'ok' });
    const ready = await request(app).get('/readyz').expect(200);
    expect(ready.body.checks).toEqual({ postgres: 'ok', redis: 'ok' });
  });

  it('answers /readyz 503 naming Redis when Redis is unreachable', async () => {
    const down = new Redis('redis://127.0.0.1:1', {
      lazyConnect: true,
      maxRetriesPerRequest: 0,
      enableOfflineQueue: false,
    });
    down.on('error', () => {}); // as index.ts does (it logs): no "Unhandled error event" on stderr
    const app = createApp({
      db: t.db,
      redis: down,
      logger: createLogger('test', 'silent'),
      env: loadEnv({}),
    });
    const ready = await request(app).get('/readyz').expect(503);
    expect(ready.body.checks.postgres).toBe('ok');
    expect(ready.body.checks.redis).not.toBe('ok');
    down.disconnect();
  });
});
