import { useTestDatabase } from '@pkgreg/db/vitest';
import express from 'express';
import request from 'supertest';
import { afterAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { type AccessCache, createAccessCache } from '../src/accounts/access-cache.js';
import { forgetAccessOnWrites } from '../src/accounts/forget-access.js';

// The access cache's first guarantee, apart from the database's notifications (accounts.test.ts covers
// those across processes): a write this process answers successfully drops what was kept before its
// response leaves, so its writer's next request never meets the old reach. The routes here write
// nothing, so no notification can be what emptied the cache.

const database = useTestDatabase();
let cache: AccessCache;

const app = express();
app.use((req, res, next) => forgetAccessOnWrites(cache)(req, res, next));
app.get('/read', (_req, res) => {
  res.json({ ok: true });
});
app.post('/write', (_req, res) => {
  res.json({ ok: true });
});
app.delete('/refused', (_req, res) => {
  res.status(403).json({ error: 'forbidden' });
});
app.post('/failed', () => {
  throw new Error('write failed');
});

beforeEach(async () => {
  await cache?.close();
  cache = createAccessCache(database.db, { ttlMs: 60_000, max: 100 });
  // Kept once its LISTEN is up (until then every lookup reads the database).
  await vi.waitFor(
    async () => {
      await cache.get('token', async () => ({ account: 'a' }));
      expect(cache.has('token')).toBe(true);
    },
    { timeout: 5000, interval: 20 },
  );
});

afterAll(() => cache?.close());

describe('forgetAccessOnWrites', () => {
  it('drops everything kept when a write succeeds, by the time its response arrives', async () => {
    await request(app).post('/write').expect(200);
    expect(cache.has('token')).toBe(false);
    expect(cache.size()).toBe(0);
  });

  it('keeps it for reads, refused writes and failed writes', async () => {
    await request(app).get('/read').expect(200);
    await request(app).head('/read').expect(200);
    await request(app).delete('/refused').expect(403);
    await request(app).post('/failed').expect(500);
    expect(cache.has('token')).toBe(true);
  });
});
