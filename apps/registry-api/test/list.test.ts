import request from 'supertest';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  refreshDerivedTables,
  startDerivedTablesRefresher,
} from '../src/packages/derived-tables-refresher.js';
import { readDerivedCounter, readListChangeCounter } from '../src/packages/packages.repository.js';
import { insertPackages, type PackageInsert, packageRow, silentLogger, useTestRegistry } from './fixtures.js';

const t = useTestRegistry();
const rows: PackageInsert[] = [];

// 47 visible packages with heavy ties: 3 distinct star counts, 2 index times, repeated names across scopes.
beforeAll(async () => {
  const scopes = ['zeta', 'alpha', 'mid'];
  for (let i = 0; i < 16; i += 1) {
    for (const scope of scopes) {
      if (scope === 'mid' && i === 15) continue;
      rows.push(
        packageRow({
          scope,
          name: `tool-${String(i % 8).padStart(2, '0')}-${i < 8 ? 'a' : 'b'}`,
          repo_stars: (i % 3) * 10,
          last_indexed_at: i % 2 ? '2026-11-20T10:00:00.000Z' : '2026-11-19T10:00:00.000Z',
        }),
      );
    }
  }
  rows.push(packageRow({ scope: 'alpha', name: 'hidden', status: 'delisted', repo_stars: 10 }));
  await insertPackages(t.db, rows);
});

const visible = () => rows.filter((r) => r.status !== 'delisted');
const keyOf = (p: { scope: string; name: string }) => `${p.scope}/${p.name}`;
const cmp = (a: string | number, b: string | number) => (a < b ? -1 : a > b ? 1 : 0);

async function allPages(query: string, pageSize: number) {
  const seen: string[] = [];
  let total = -1;
  for (let page = 1; page <= 20; page += 1) {
    const res = await request(t.app)
      .get(`/api/packages?${query}&page=${page}&pageSize=${pageSize}`)
      .expect(200);
    total = res.body.total;
    if (res.body.data.length === 0) break;
    expect(res.body.data.length).toBeLessThanOrEqual(pageSize);
    seen.push(...res.body.data.map(keyOf));
  }
  return { seen, total };
}

type Row = PackageInsert & { repo_stars: number; last_indexed_at: string };
const expectedOrder: Record<string, (a: Row, b: Row) => number> = {
  'sort=name&order=asc': (a, b) => cmp(a.name, b.name) || cmp(a.scope, b.scope),
  'sort=name&order=desc': (a, b) => cmp(b.name, a.name) || cmp(a.scope, b.scope),
  'sort=stars&order=asc': (a, b) =>
    a.repo_stars - b.repo_stars || cmp(a.scope, b.scope) || cmp(a.name, b.name),
  'sort=stars&order=desc': (a, b) =>
    b.repo_stars - a.repo_stars || cmp(a.scope, b.scope) || cmp(a.name, b.name),
  'sort=indexed&order=asc': (a, b) =>
    cmp(a.last_indexed_at, b.last_indexed_at) || cmp(a.scope, b.scope) || cmp(a.name, b.name),
  'sort=indexed&order=desc': (a, b) =>
    cmp(b.last_indexed_at, a.last_indexed_at) || cmp(a.scope, b.scope) || cmp(a.name, b.name),
};

describe('list pagination with ties (decisions.md: Registry / List: ties break by scope, then name)', () => {
  it.each(Object.keys(expectedOrder))(
    '%s: pages of 7 never overlap or skip, follow the tie rule, and total counts visible packages',
    async (query) => {
      const { seen, total } = await allPages(query, 7);
      const expected = [...(visible() as Row[])].sort(expectedOrder[query]).map(keyOf);
      expect(total).toBe(47);
      expect(new Set(seen).size).toBe(seen.length);
      expect(seen).toEqual(expected);
    },
  );

  it('the same order holds whatever the page size (page 3 of 5 = items 11-15 of pageSize 100)', async () => {
    const big = await request(t.app).get('/api/packages?sort=stars&order=desc&pageSize=100').expect(200);
    const small = await request(t.app)
      .get('/api/packages?sort=stars&order=desc&page=3&pageSize=5')
      .expect(200);
    expect(small.body.data).toEqual(big.body.data.slice(10, 15));
  });
});

describe('list positions follow package changes (issue: dense positions refreshed when packages change)', () => {
  it('a delisted package disappears at once; a new one appears after the refresh; no overlap meanwhile', async () => {
    await t.db
      .updateTable('packages')
      .set({ status: 'delisted' })
      .where('scope', '=', 'zeta')
      .where('name', '=', 'tool-00-a')
      .execute();
    const page = await request(t.app).get('/api/packages?pageSize=100').expect(200);
    expect(page.body.data.map(keyOf)).not.toContain('zeta/tool-00-a');

    await t.db
      .insertInto('packages')
      .values(packageRow({ scope: 'alpha', name: 'aaa-new' }))
      .execute();
    await refreshDerivedTables(t.db);
    const after = await request(t.app).get('/api/packages?pageSize=100').expect(200);
    expect(after.body.data[0].name).toBe('aaa-new');
    expect(after.body.total).toBe(47);
    expect(after.body.data.map(keyOf)).not.toContain('zeta/tool-00-a');
  });

  it('a rebuild stores the change counter it saw, so a restarted process does not rebuild for nothing', async () => {
    await refreshDerivedTables(t.db);
    expect(await readDerivedCounter(t.db)).toBe(await readListChangeCounter(t.db));
    await t.db
      .insertInto('packages')
      .values(packageRow({ scope: 'alpha', name: 'counter-bump' }))
      .execute();
    expect(await readListChangeCounter(t.db)).toBeGreaterThan((await readDerivedCounter(t.db)) ?? 0);
    await refreshDerivedTables(t.db);
    expect(await readDerivedCounter(t.db)).toBe(await readListChangeCounter(t.db));
  });

  it('the background refresher notices a change through the change counter within about one interval', async () => {
    const refresher = startDerivedTablesRefresher(t.db, silentLogger, 50);
    try {
      await t.db
        .insertInto('packages')
        .values(packageRow({ scope: 'alpha', name: 'aab-newer' }))
        .execute();
      await expect
        .poll(async () => (await request(t.app).get('/api/packages?pageSize=2')).body.data.map(keyOf), {
          timeout: 5000,
          interval: 50,
        })
        .toContain('alpha/aab-newer');
    } finally {
      await refresher.stop();
    }
  });
});
