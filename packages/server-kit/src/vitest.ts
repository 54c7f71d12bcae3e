import type { RequestListener } from 'node:http';
import type { Db } from '@pkgreg/db';
import { TEST_REDIS_URL, testKeyPrefix } from '@pkgreg/db/testing';
import { useTestDatabase } from '@pkgreg/db/vitest';
import { Redis } from 'ioredis';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// `@pkgreg/server-kit/vitest`: tests every app serving healthRoutes shares. Apart from the main entry
// because it registers vitest hooks and tests; apps import it from their test files only.

/** What an app's health routes are built on: the test file's database and a Redis client. */
export interface HealthTestDeps {
  db: Db;
  redis: Redis;
}

/**
 * Registers the health tests for an app (issue 2: `/healthz` alive, `/readyz` Postgres and Redis
 * reachable) on a database and Redis key prefix of the test file's own. `createApp` builds the app's
 * request listener on the deps it is given; it is called once per test.
 */
export function describeHealthEndpoints(createApp: (deps: HealthTestDeps) => RequestListener): void {
  const t = useTestDatabase();
  let redis: Redis;
  beforeAll(() => {
    redis = new Redis(TEST_REDIS_URL, { keyPrefix: `${testKeyPrefix('health')}:` });
  });
  afterAll(() => {
    redis?.disconnect();
  });

  describe('health (issue 2: /healthz alive, /readyz Postgres and Redis reachable)', () => {
    it('answers /healthz and /readyz 200 when Postgres and Redis are up', async () => {
      const app = createApp({ db: t.db, redis });
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
      down.on('error', () => {}); // as the apps' index.ts do (they log): no "Unhandled error event" on stderr
      const app = createApp({ db: t.db, redis: down });
      const ready = await request(app).get('/readyz').expect(503);
      expect(ready.body.checks.postgres).toBe('ok');
      expect(ready.body.checks.redis).not.toBe('ok');
      down.disconnect();
    });
  });
}
