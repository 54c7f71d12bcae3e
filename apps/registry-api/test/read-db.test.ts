import { randomUUID } from 'node:crypto';
import { realpathSync } from 'node:fs';
import type { RequestListener } from 'node:http';
import { VersionListResponseSchema } from '@pkgreg/contracts';
import { type Db, poolOf } from '@pkgreg/db';
import { indexSource } from '@pkgreg/indexer';
import { createRepo, removeDir, skillMd, tempDir } from '@pkgreg/indexer/testing';
import { sql } from 'kysely';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../src/app.js';
import { loadEnv } from '../src/env.js';
import { refreshDerivedTables } from '../src/packages/derived-tables-refresher.js';
import { openReadDb } from '../src/read-db.js';
import { silentLogger, useTestRegistry } from './fixtures.js';

// DATABASE_READ_URL (docs/decisions.md, README): list, search, the feed, detail, skill-md, dependants
// and versions read from the read pool; writes and read-your-writes from DATABASE_URL. The read URL
// here is the same database: the pool's sessions are read-only (openReadDb), so every read path is
// shown to write nothing, and each pool's checkouts show which one a request used.

const t = useTestRegistry();
let root: string;
let readDb: Db;
let app: RequestListener;
let version: string;

/** Connections checked out of each pool while `run` runs. */
async function checkouts(run: () => Promise<unknown>): Promise<{ read: number; primary: number }> {
  const counts = { read: 0, primary: 0 };
  const onRead = () => {
    counts.read += 1;
  };
  const onPrimary = () => {
    counts.primary += 1;
  };
  const readPool = poolOf(readDb);
  const primaryPool = poolOf(t.db);
  if (!readPool || !primaryPool) throw new Error('both Dbs come from createDb');
  readPool.on('acquire', onRead);
  primaryPool.on('acquire', onPrimary);
  try {
    await run();
  } finally {
    readPool.off('acquire', onRead);
    primaryPool.off('acquire', onPrimary);
  }
  return counts;
}

beforeAll(async () => {
  root = realpathSync(tempDir('read-db-api'));
  const repo = createRepo(root, 'acme', 'skills', {
    'pdf/SKILL.md': skillMd(['name: pdf', 'description: Fills PDF forms.']),
    'notes/SKILL.md': skillMd([
      'name: notes',
      'description: Takes notes.',
      'metadata:',
      '  dependencies: "@acme/pdf"',
    ]),
  });
  await indexSource({ db: t.db }, { kind: 'git', locator: repo, owner: 'acme' });
  await refreshDerivedTables(t.db);
  const env = loadEnv({ DATABASE_READ_URL: t.url, DETAIL_CACHE_TTL_MS: '0', CATALOG_VALIDATOR_TTL_MS: '0' });
  readDb = openReadDb(env) as Db;
  app = createApp({ db: t.db, readDb, redis: t.redis, logger: silentLogger, env });
  const versions = await request(app).get('/api/packages/@acme/pdf/versions').expect(200);
  version = VersionListResponseSchema.parse(versions.body).data[0]?.version ?? '';
});
afterAll(async () => {
  await readDb?.destroy();
  if (root) removeDir(root);
});

describe('DATABASE_READ_URL', () => {
  it('is optional and must be a URL', () => {
    expect(loadEnv({}).DATABASE_READ_URL).toBeUndefined();
    expect(openReadDb(loadEnv({}))).toBeUndefined();
    expect(() => loadEnv({ DATABASE_READ_URL: 'not a url' })).toThrow(/DATABASE_READ_URL/);
  });

  it('opens read-only sessions: a write through it fails', async () => {
    const setting = await sql<{
      v: string;
    }>`select current_setting('default_transaction_read_only') as v`.execute(readDb);
    expect(setting.rows[0]?.v).toBe('on');
    await expect(sql`update packages set repo_stars = 1`.execute(readDb)).rejects.toThrow(/read-only/);
  });

  it('list, search, the feed, detail, skill-md, dependants and versions read from it alone', async () => {
    const base = '/api/packages/@acme/pdf';
    const paths = [
      '/api/packages',
      '/api/packages?sort=stars&order=desc&kind=skill',
      '/api/packages?limit=10',
      '/api/search?q=pdf',
      '/api/search?q=pdf&kind=skill',
      base,
      `${base}/skill-md`,
      `${base}/source`,
      `${base}/dependants`,
      `${base}/versions`,
      `${base}/versions/latest`,
      `${base}/versions/${version}`,
      `${base}/versions/${version}/files/SKILL.md`,
      `${base}/versions/${version}/archive.tgz`,
    ];
    for (const path of paths) {
      const counts = await checkouts(async () => {
        const res = await request(app).get(path);
        expect({ path, status: res.status }).toEqual({ path, status: path.endsWith('/source') ? 302 : 200 });
      });
      expect({ path, ...counts, read: counts.read > 0 }).toEqual({ path, read: true, primary: 0 });
    }
  });

  it('writes and read-your-writes use DATABASE_URL and still work', async () => {
    const writes = await checkouts(async () => {
      await request(app).post('/api/packages/@acme/pdf/track').expect(200);
      await request(app).post('/api/packages/@acme/pdf/reports').send({ reason: 'spam' }).expect(201);
      // A publish run is read back by whoever just started it: never from a replica that may trail.
      await request(app).get(`/api/publish/${randomUUID()}`).expect(404);
    });
    expect(writes.primary).toBeGreaterThan(0);
    expect(writes.read).toBe(0);
    const reports = await t.db.selectFrom('package_reports').select('reason').execute();
    expect(reports.map((r) => r.reason)).toEqual(['spam']);
  });

  it('readiness checks the read pool too: a replica that does not answer is a 503 naming it', async () => {
    const ready = await request(app).get('/readyz').expect(200);
    expect(ready.body.checks).toEqual({ postgres: 'ok', redis: 'ok', postgresRead: 'ok' });
    // Nothing listens on port 1.
    const down = openReadDb({
      DATABASE_READ_URL: 'postgres://postgres@127.0.0.1:1/none',
      REGISTRY_DB_POOL_SIZE: 1,
    });
    if (!down) throw new Error('a read URL opens a pool');
    const env = loadEnv({ DATABASE_READ_URL: 'postgres://postgres@127.0.0.1:1/none' });
    const unready = createApp({ db: t.db, readDb: down, redis: t.redis, logger: silentLogger, env });
    const res = await request(unready).get('/readyz').expect(503);
    expect(res.body.checks).toMatchObject({ postgres: 'ok', redis: 'ok' });
    expect(res.body.checks.postgresRead).not.toBe('ok');
    await down.destroy();
  });
});
