// The sync feed (issue 20): GET /api/packages?cursor=…&limit=…&updatedSince=…, every package in the order
// of its last change, delisted, quarantined and removed ones with their status, so that a mirror that
// follows nextCursor stays exact. Packages come from a real git repository through the real indexer,
// and every path that changes a package is checked to move it in the feed.
import { realpathSync } from 'node:fs';
import { type FeedResponse, FeedResponseSchema } from '@pkgreg/contracts';
import { createTestDatabase } from '@pkgreg/db/testing';
import { indexSource } from '@pkgreg/indexer';
import { commitFiles, createRepo, removeDir, skillMd, tempDir } from '@pkgreg/indexer/testing';
import { deprecatePackage, removePackage, rescanVersions, yankVersion } from '@pkgreg/registry';
import { sql } from 'kysely';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { foldAllDownloadDeltas } from '../src/downloads/download-flusher.js';
import { quarantinePackage } from '../src/moderation/moderation.repository.js';
import { decodeCursor, encodeCursor } from '../src/packages/feed.service.js';

import { insertPackages, packageRow, useTestRegistry } from './fixtures.js';

const t = useTestRegistry({ DETAIL_CACHE_TTL_MS: '0' });
let root: string;
let repo: string;

const skill = (name: string, extra = '') =>
  skillMd([`name: ${name}`, `description: The ${name} skill.${extra}`]);

beforeAll(async () => {
  root = realpathSync(tempDir('feed'));
  repo = createRepo(root, 'acme', 'skills', {
    'pdf/SKILL.md': skill('pdf'),
    'csv/SKILL.md': skill('csv'),
    'notes/SKILL.md': skill('notes'),
  });
  await indexSource({ db: t.db }, { kind: 'git', locator: repo, owner: 'acme' });
  const rows = [];
  for (let i = 0; i < 25; i += 1) rows.push(packageRow({ scope: 'bulk', name: `item-${i}` }));
  rows.push(packageRow({ scope: 'bulk', name: 'was-delisted', status: 'delisted' }));
  await insertPackages(t.db, rows);
});
afterAll(() => {
  if (root) removeDir(root);
});

const keyOf = (item: { scope: string; name: string }) => `${item.scope}/${item.name}`;

async function page(query: string): Promise<FeedResponse> {
  const res = await request(t.app).get(`/api/packages?${query}`);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return FeedResponseSchema.parse(res.body);
}

/** Follows nextCursor from `cursor` until a short page: everything the feed has now. */
async function drain(cursor?: string, limit = 7): Promise<{ items: FeedResponse['data']; cursor: string }> {
  const items: FeedResponse['data'] = [];
  let next = cursor;
  for (;;) {
    const body = await page(`limit=${limit}${next ? `&cursor=${next}` : ''}`);
    items.push(...body.data);
    next = body.nextCursor;
    if (body.data.length < limit) return { items, cursor: next };
  }
}

/** What changed after `cursor`, waiting out other test files' transactions that hold the horizon. */
async function changesAfter(cursor: string, expected: string[]): Promise<FeedResponse['data']> {
  let items: FeedResponse['data'] = [];
  await expect
    .poll(
      async () => {
        items = (await drain(cursor)).items;
        return expected.every((key) => items.some((item) => keyOf(item) === key));
      },
      { timeout: 10_000, interval: 100 },
    )
    .toBe(true);
  return items;
}

describe('the feed: every package once, in the order of its last change', () => {
  it('pages of 7 from the start hold every package exactly once, delisted ones with their status', async () => {
    const all = await t.db.selectFrom('packages').select(['scope', 'name']).execute();
    let items: FeedResponse['data'] = [];
    await expect
      .poll(
        async () => {
          items = (await drain()).items;
          return items.length;
        },
        { timeout: 10_000, interval: 100 },
      )
      .toBe(all.length);
    expect(items.map(keyOf).sort()).toEqual(all.map(keyOf).sort());
    expect(new Set(items.map(keyOf)).size).toBe(items.length);
    const delisted = items.find((item) => item.name === 'was-delisted');
    expect(delisted?.status).toBe('delisted');
    const pdf = items.find((item) => keyOf(item) === 'acme/pdf');
    expect(pdf).toMatchObject({ status: 'active', version: expect.any(String), tags: [], verified: false });
    // Each item's last change is no older than the one before it (same transaction, same time).
    const times = items.map((item) => Date.parse(item.updatedAt));
    expect(times.every((time, i) => i === 0 || time >= (times[i - 1] as number) - 5)).toBe(true);
  });

  it('stable under inserts and updates: what changes after a cursor comes after it, once more', async () => {
    const first = await page('limit=5');
    await t.db
      .insertInto('packages')
      .values(packageRow({ scope: 'late', name: 'newcomer' }))
      .execute();
    await t.db.updateTable('packages').set({ repo_stars: 999 }).where('name', '=', 'item-0').execute();
    const rest = await changesAfter(first.nextCursor, ['late/newcomer', 'bulk/item-0']);
    const seen = [...first.data, ...rest].map(keyOf);
    // The walk covers every package; the two changed ones come last, in the order of their change.
    expect(seen.slice(-2)).toEqual(['late/newcomer', 'bulk/item-0']);
    expect(new Set(seen).size).toBe(
      await t.db
        .selectFrom('packages')
        .select('id')
        .execute()
        .then((r) => r.length),
    );
  });

  it('a transaction still open holds back every change after it, so none lands behind a cursor', async () => {
    const { cursor } = await drain();
    await t.db.transaction().execute(async (trx) => {
      await trx
        .updateTable('packages')
        .set({ description: 'slow change' })
        .where('name', '=', 'item-1')
        .execute();
      // Committed, but after the open transaction took its id.
      await t.db
        .updateTable('packages')
        .set({ description: 'fast change' })
        .where('name', '=', 'item-2')
        .execute();
      const during = await drain(cursor);
      expect(during.items.map(keyOf)).not.toContain('bulk/item-2');
      expect(during.items.map(keyOf)).not.toContain('bulk/item-1');
    });
    const after = await changesAfter(cursor, ['bulk/item-1', 'bulk/item-2']);
    expect(after.map(keyOf).slice(-2)).toEqual(['bulk/item-1', 'bulk/item-2']);
  });

  it('a transaction open in another database of the cluster holds nothing back', async () => {
    const { cursor } = await drain();
    const other = await createTestDatabase();
    try {
      await other.db.transaction().execute(async (trx) => {
        // A write, so that it holds a transaction id, older than the change below.
        await trx
          .insertInto('packages')
          .values(packageRow({ scope: 'elsewhere', name: 'open' }))
          .execute();
        const otherXid = await sql<{ xid: string }>`select pg_current_xact_id()::text as xid`.execute(trx);
        await t.db
          .updateTable('packages')
          .set({ description: 'changed' })
          .where('name', '=', 'item-3')
          .execute();
        // The cluster-wide horizon (the oldest running transaction) is held back by it...
        const held = await sql<{ held: boolean }>`
          select pg_snapshot_xmin(pg_current_snapshot()) <= ${otherXid.rows[0]?.xid}::xid8 as held`.execute(
          t.db,
        );
        expect(held.rows[0]?.held).toBe(true);
        // ...while the feed serves the change, the other transaction still open.
        const after = await changesAfter(cursor, ['bulk/item-3']);
        expect(after.map(keyOf)).toContain('bulk/item-3');
      });
    } finally {
      await other.destroy();
    }
  });

  it('an empty page keeps the cursor; polling with it later returns what changed since', async () => {
    const { cursor } = await drain();
    await t.db.updateTable('packages').set({ repo_stars: 5 }).where('name', '=', 'item-3').execute();
    const changed = await changesAfter(cursor, ['bulk/item-3']);
    expect(changed.map(keyOf)).toEqual(['bulk/item-3']);
  });

  it('updatedSince starts at the packages changed at or after that time', async () => {
    await drain();
    const since = (await sql<{ now: Date }>`select now() as now`.execute(t.db)).rows[0]?.now as Date;
    await t.db.updateTable('packages').set({ repo_stars: 6 }).where('name', '=', 'item-4').execute();
    let keys: string[] = [];
    await expect
      .poll(
        async () => {
          keys = (await page(`updatedSince=${since.toISOString()}&limit=100`)).data.map(keyOf);
          return keys.includes('bulk/item-4');
        },
        { timeout: 10_000, interval: 100 },
      )
      .toBe(true);
    expect(keys).not.toContain('bulk/item-5');
    const future = await page('updatedSince=2999-01-01T00:00:00Z');
    expect(future.data).toEqual([]);
    // Nothing changed since: the cursor is the feed's end, which later finds the next change.
    await t.db.updateTable('packages').set({ repo_stars: 7 }).where('name', '=', 'item-5').execute();
    expect((await changesAfter(future.nextCursor, ['bulk/item-5'])).map(keyOf)).toContain('bulk/item-5');
  });
});

describe('every path that changes a package moves it in the feed; a download does not', () => {
  /** Runs `change`, then expects `keys` (and nothing else of `among`) after the cursor of before. */
  async function moves(change: () => Promise<unknown>, keys: string[], status?: string) {
    const { cursor } = await drain();
    await change();
    const items = await changesAfter(cursor, keys);
    for (const key of keys) {
      const item = items.find((i) => keyOf(i) === key);
      if (status) expect(item?.status).toBe(status);
    }
    return items;
  }

  it('indexing a new version', async () => {
    commitFiles(repo, { 'pdf/SKILL.md': skill('pdf', ' Now better.') });
    await moves(() => indexSource({ db: t.db }, { kind: 'git', locator: repo, owner: 'acme' }), ['acme/pdf']);
  });

  it('a delisting by the indexer (its SKILL.md gone)', async () => {
    commitFiles(repo, { 'notes/SKILL.md': null });
    await moves(
      () => indexSource({ db: t.db }, { kind: 'git', locator: repo, owner: 'acme' }),
      ['acme/notes'],
      'delisted',
    );
  });

  it("the operator's removal and quarantine", async () => {
    await moves(
      () => removePackage(t.db, { scope: 'bulk', name: 'item-6' }, 'malware'),
      ['bulk/item-6'],
      'removed',
    );
    await moves(
      () => quarantinePackage(t.db, { scope: 'bulk', name: 'item-7' }, 'reported'),
      ['bulk/item-7'],
      'quarantined',
    );
  });

  it("the owner's deprecation and a yank", async () => {
    const pkg = await t.db
      .selectFrom('packages')
      .select('id')
      .where('scope', '=', 'acme')
      .where('name', '=', 'csv')
      .executeTakeFirstOrThrow();
    await moves(() => deprecatePackage(t.db, pkg.id, 'use pdf'), ['acme/csv'], 'deprecated');
    const version = await t.db
      .selectFrom('package_versions')
      .select('id')
      .where('package_id', '=', pkg.id)
      .executeTakeFirstOrThrow();
    await moves(() => yankVersion(t.db, version.id, 'broken'), ['acme/csv']);
  });

  it('a risk change (rescan)', async () => {
    await t.db
      .updateTable('packages')
      .set({ risk: null })
      .where('scope', '=', 'acme')
      .where('name', '=', 'pdf')
      .execute();
    await moves(
      () => rescanVersions(t.db, { all: true, packages: [{ scope: 'acme', name: 'pdf' }] }),
      ['acme/pdf'],
    );
  });

  it('downloads move no package', async () => {
    const { cursor } = await drain();
    await request(t.app).post('/api/packages/@bulk/item-8/track').expect(200);
    await foldAllDownloadDeltas(t.db);
    // A later change, so that the feed has moved past the fold when it shows it.
    await t.db.updateTable('packages').set({ repo_stars: 1 }).where('name', '=', 'item-9').execute();
    const items = await changesAfter(cursor, ['bulk/item-9']);
    expect(items.map(keyOf)).toEqual(['bulk/item-9']);
  });
});

describe('feed parameters', () => {
  it('the cursor round-trips and is opaque (base64url)', () => {
    const position = { xid: '123456', id: '0b6f3c1e-5a2d-4c8e-9f10-2b3c4d5e6f70' };
    const cursor = encodeCursor(position);
    expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(decodeCursor(cursor)).toEqual(position);
  });

  it.each([
    ['cursor=abc', 'cursor must be the nextCursor of an earlier answer'],
    [
      `cursor=${Buffer.from('f1:x:y').toString('base64url')}`,
      'cursor must be the nextCursor of an earlier answer',
    ],
    ['cursor=a%2Fb', 'cursor must be the nextCursor of an earlier answer'],
    ['cursor=a&cursor=b', 'cursor must be given once'],
    ['limit=0', 'limit must be an integer from 1 to 500'],
    ['limit=501', 'limit must be an integer from 1 to 500'],
    ['updatedSince=yesterday', 'updatedSince must be an ISO 8601 date-time with an offset'],
    ['limit=5&page=2', 'page cannot be combined with cursor, limit or updatedSince'],
    ['limit=5&sort=stars', 'sort cannot be combined with cursor, limit or updatedSince'],
    [
      'updatedSince=2026-01-01T00:00:00Z&kind=app',
      'kind cannot be combined with cursor, limit or updatedSince',
    ],
  ])('400 for %s', async (query, error) => {
    await request(t.app).get(`/api/packages?${query}`).expect(400, { error });
  });

  it('limit alone is the feed from its start, 100 by default', async () => {
    const body = await page('limit=3');
    expect(body.limit).toBe(3);
    expect(body.data).toHaveLength(3);
    expect(
      (await page(`cursor=${encodeCursor({ xid: '0', id: '00000000-0000-0000-0000-000000000000' })}`)).limit,
    ).toBe(100);
  });
});
