// Issue 20, "Search and list": filters and the popularity sorts on GET /api/packages, downloads per day
// in detail. Every filtered page is compared with a plain SQL of the same filters and order, through
// both ways a filtered list reads (facet lists, walking the order) and facet blocks of 8 positions, so
// that the complements and multi-block chains run.
import {
  type ListQuery,
  ListQuerySchema,
  ListResponseSchema,
  PackageDetailSchema,
  type PackageFilters,
} from '@pkgreg/contracts';
import { sql } from 'kysely';
import request from 'supertest';
import { beforeAll, describe, expect, it } from 'vitest';
import { foldAllDownloadDeltas } from '../src/downloads/download-flusher.js';
import { refreshDerivedTables, refreshPopularity } from '../src/packages/derived-tables-refresher.js';
import { DEFAULT_LIST_OPTIONS, listPackages } from '../src/packages/list.service.js';
import { rebuildSearchTables } from '../src/search/search.service.js';
import { insertPackages, type PackageInsert, packageRow, useTestRegistry } from './fixtures.js';

const t = useTestRegistry({ DETAIL_CACHE_TTL_MS: '0' });
const blocks = { blockShift: 3, blockMinDocs: 2 };

const KINDS = ['skill', 'skill', 'skill', 'composite', 'workflow', 'app'] as const;
const CATEGORIES = ['Data', 'devops', null, 'design', ' data '];
const TAGS = ['pdf', 'PDF', 'csv', 'charts', 'git', 'review'];
const AGENTS = ['claude-code', 'codex', 'Cursor', 'gemini-cli'];
const LICENSES = ['MIT', 'Apache-2.0', null, 'mit', 'GPL-3.0'];
const RISKS = ['none', 'none', 'low', 'medium', 'high', null] as const;

// 150 packages in 9 scopes with every filter's values spread, ties in stars and downloads, a few
// delisted and quarantined ones (never listed).
beforeAll(async () => {
  const rows: PackageInsert[] = [];
  for (let i = 0; i < 150; i += 1) {
    rows.push(
      packageRow({
        scope: `owner-${i % 9}`,
        name: `pkg-${String(i).padStart(3, '0')}`,
        kind: KINDS[i % KINDS.length],
        category: CATEGORIES[i % CATEGORIES.length] ?? null,
        tags: [TAGS[i % TAGS.length] as string, TAGS[(i * 7) % TAGS.length] as string],
        compatibility:
          i % 11 === 0 ? [] : [AGENTS[i % AGENTS.length] as string, AGENTS[(i + 1) % 4] as string],
        license: LICENSES[i % LICENSES.length] ?? null,
        verified: i % 4 === 0,
        status: i % 13 === 0 ? 'deprecated' : i % 37 === 5 ? 'delisted' : 'active',
        quarantined_at: i % 41 === 7 ? '2026-11-20T00:00:00.000Z' : null,
        risk: RISKS[i % RISKS.length] ?? null,
        repo_stars: (i * 37) % 23,
        download_count: (i * 53) % 17,
        // The downloads order counts unique downloaders (issue 26), a number of its own.
        unique_download_count: (i * 29) % 13,
        last_indexed_at: new Date(Date.UTC(2026, 10, 1 + (i % 20))).toISOString(),
      }),
    );
  }
  await insertPackages(t.db, rows);
  // Recent downloads for trending: package i has i % 5 downloads each of the days i % 9 days ago.
  await sql`
    insert into package_downloads_daily (package_id, day, count)
    select p.id, (now() at time zone 'UTC')::date - (substr(p.name, 5)::int % 9), substr(p.name, 5)::int % 5 + 1
    from packages p where substr(p.name, 5)::int % 3 <> 0`.execute(t.db);
  // Rows written here, not by a fold: the full refresh rebuilds the popularity positions regardless.
  await refreshDerivedTables(t.db);
  await rebuildSearchTables(t.db, blocks);
});

/** The filters as plain SQL, written apart from the service's (src/search/filters.ts). */
function plainWhere(filters: PackageFilters) {
  const parts = [sql`status <> 'delisted'`, sql`quarantined_at is null`];
  const lowered = (column: string) => sql`array(select lower(btrim(x)) from unnest(${sql.ref(column)}) x)`;
  if (filters.kind) parts.push(sql`kind = ${filters.kind}`);
  if (filters.category) parts.push(sql`lower(btrim(category)) = ${filters.category}`);
  if (filters.tag) parts.push(sql`${filters.tag} = any(${lowered('tags')})`);
  if (filters.agent) parts.push(sql`${filters.agent} = any(${lowered('compatibility')})`);
  if (filters.license) parts.push(sql`lower(btrim(license)) = ${filters.license}`);
  if (filters.verified !== undefined) parts.push(sql`verified = ${filters.verified}`);
  if (filters.status) parts.push(sql`status = ${filters.status}`);
  if (filters.risk) {
    const levels = ['none', 'low', 'medium', 'high'];
    parts.push(sql`risk = any(${levels.slice(0, levels.indexOf(filters.risk) + 1)}::text[])`);
  }
  if (filters.owner) parts.push(sql`scope = ${filters.owner}`);
  return sql.join(parts, sql` and `);
}

const ORDER_SQL: Record<string, string> = {
  'name.asc': 'name, scope',
  'name.desc': 'name desc, scope',
  'stars.asc': 'repo_stars, scope, name',
  'stars.desc': 'repo_stars desc, scope, name',
  'indexed.asc': 'last_indexed_at, scope, name',
  'indexed.desc': 'last_indexed_at desc, scope, name',
  'downloads.asc': 'unique_download_count, scope, name',
  'downloads.desc': 'unique_download_count desc, scope, name',
  // docs/decisions.md: today 7, yesterday 6, ... six days ago 1.
  'trending.asc': 'trending, scope, name',
  'trending.desc': 'trending desc, scope, name',
};

async function expected(filters: PackageFilters, sort: string, order: string): Promise<string[]> {
  const result = await sql<{ key: string }>`
    select scope || '/' || name as key from (
      select p.*, coalesce((select sum(d.count * (7 - ((now() at time zone 'UTC')::date - d.day)))
        from package_downloads_daily d where d.package_id = p.id
          and d.day > (now() at time zone 'UTC')::date - 7), 0) as trending
      from packages p) p
    where ${plainWhere(filters)}
    order by ${sql.raw(ORDER_SQL[`${sort}.${order}`] as string)}`.execute(t.db);
  return result.rows.map((r) => r.key);
}

const keyOf = (item: { scope: string; name: string }) => `${item.scope}/${item.name}`;

async function allPages(query: Omit<ListQuery, 'page' | 'pageSize'>, filteredBy: 'facets' | 'walk') {
  const seen: string[] = [];
  let total = -1;
  for (let page = 1; page <= 40; page += 1) {
    const res = await listPackages(
      t.db,
      { ...query, page, pageSize: 7 },
      { ...DEFAULT_LIST_OPTIONS, filteredBy },
    );
    total = res.total;
    if (res.data.length === 0) break;
    seen.push(...res.data.map(keyOf));
  }
  return { seen, total };
}

const FILTER_CASES: PackageFilters[] = [
  { kind: 'app' },
  { kind: 'skill' },
  { category: 'data' },
  { tag: 'pdf' },
  { agent: 'cursor' },
  { license: 'mit' },
  { verified: true },
  { verified: false },
  { status: 'active' },
  { status: 'deprecated' },
  { risk: 'none' },
  { risk: 'medium' },
  { owner: 'owner-3' },
  { kind: 'skill', verified: false, status: 'active' },
  { tag: 'csv', risk: 'low', license: 'apache-2.0' },
  { owner: 'owner-1', kind: 'skill', agent: 'codex' },
  { category: 'nothing-has-it' },
];

describe('filters on GET /api/packages equal a plain SQL of the same filters, in every order', () => {
  it.each(FILTER_CASES.map((filters) => [JSON.stringify(filters), filters] as const))(
    '%s: both ways of reading, pages of 7, total',
    async (_label, filters) => {
      for (const [sort, order] of Object.keys(ORDER_SQL).map((k) => k.split('.'))) {
        const want = await expected(filters, sort as string, order as string);
        const query = { sort, order, ...filters } as Omit<ListQuery, 'page' | 'pageSize'>;
        for (const filteredBy of ['walk', 'facets'] as const) {
          const got = await allPages(query, filteredBy);
          expect({ filters, sort, order, filteredBy, ...got }).toEqual({
            filters,
            sort,
            order,
            filteredBy,
            seen: want,
            total: want.length,
          });
        }
      }
    },
  );

  it('through the API: filters parse, total counts the packages that pass, a page past them is empty', async () => {
    await refreshDerivedTables(t.db);
    const res = await request(t.app).get('/api/packages?kind=app&sort=downloads&order=desc&pageSize=100');
    expect(res.status).toBe(200);
    const body = ListResponseSchema.parse(res.body);
    expect(body.data.map(keyOf)).toEqual(await expected({ kind: 'app' }, 'downloads', 'desc'));
    expect(body.total).toBe(body.data.length);
    const past = await request(t.app).get('/api/packages?kind=app&page=99').expect(200);
    expect(past.body).toMatchObject({ data: [], total: body.total, page: 99 });
    const upper = await request(t.app).get('/api/packages?tag=PDF&owner=Owner-2&pageSize=100').expect(200);
    expect(upper.body.data.map(keyOf)).toEqual(
      await expected({ tag: 'pdf', owner: 'owner-2' }, 'name', 'asc'),
    );
  });

  it.each([
    ['kind=plugin', 'kind must be one of skill, composite, workflow, app'],
    ['kind=app&kind=skill', 'kind must be given once'],
    ['tag=a&tag=b', 'tag must be given once'],
    ['verified=yes', 'verified must be true or false'],
    ['status=delisted', 'status must be one of active, deprecated'],
    ['risk=critical', 'risk must be one of none, low, medium, high'],
    ['owner=no%20such', 'owner must be a scope: 1-64 of a-z 0-9 -'],
    [`category=${'c'.repeat(65)}`, 'category must be 1-64 characters'],
    ['license=', 'license must be 1-128 characters'],
    ['sort=popular', 'sort must be one of name, stars, indexed, downloads, trending'],
  ])('400 naming the parameter for %s', async (query, error) => {
    await request(t.app).get(`/api/packages?${query}`).expect(400, { error });
    // The same filters on search, with the same messages.
    if (!query.startsWith('sort'))
      await request(t.app).get(`/api/search?q=pkg&${query}`).expect(400, { error });
  });

  it('the list query schema is the one the route parses (filters are additive)', () => {
    expect(ListQuerySchema.parse({})).toEqual({ page: 1, pageSize: 20, sort: 'name', order: 'asc' });
  });
});

describe('downloads per day (issue 20: Sorts; detail downloadsLast7Days, downloadsLast30Days)', () => {
  it("a track is folded into download_count and today's row in one transaction; detail sums the days", async () => {
    const before = PackageDetailSchema.parse(
      (await request(t.app).get('/api/packages/@owner-1/pkg-010').expect(200)).body,
    );
    // Three downloaders (a trusted proxy's X-Forwarded-For): the day counts each once (issue 26).
    for (let i = 0; i < 3; i += 1)
      await request(t.app)
        .post('/api/packages/@owner-1/pkg-010/track')
        .set('X-Forwarded-For', `198.51.100.${i + 1}`)
        .expect(200);
    await foldAllDownloadDeltas(t.db);
    const after = PackageDetailSchema.parse(
      (await request(t.app).get('/api/packages/@owner-1/pkg-010').expect(200)).body,
    );
    expect(after.downloadCount).toBe(before.downloadCount + 3);
    expect(after.downloadsLast7Days).toBe(before.downloadsLast7Days + 3);
    expect(after.downloadsLast30Days).toBe(before.downloadsLast30Days + 3);
    expect(after.dailyDownloads?.counts).toHaveLength(30);
    expect(after.dailyDownloads?.counts.at(-1)).toBe((before.dailyDownloads?.counts.at(-1) ?? 0) + 3);
    const today = new Date().toISOString().slice(0, 10);
    const from = new Date(Date.parse(`${today}T00:00:00Z`) - 29 * 86_400_000).toISOString().slice(0, 10);
    expect(after.dailyDownloads?.from).toBe(from);
  });

  it('the last 7 and 30 days are the sums of the days in them, older days left out', async () => {
    const pkg = await t.db
      .selectFrom('packages')
      .select('id')
      .where('name', '=', 'pkg-020')
      .executeTakeFirstOrThrow();
    await sql`delete from package_downloads_daily where package_id = ${pkg.id}`.execute(t.db);
    await sql`
      insert into package_downloads_daily (package_id, day, count)
      select ${pkg.id}::uuid, (now() at time zone 'UTC')::date - d, d + 1 from unnest(array[0, 6, 7, 29, 30, 45]) d`.execute(
      t.db,
    );
    const detail = PackageDetailSchema.parse(
      (await request(t.app).get('/api/packages/@owner-2/pkg-020').expect(200)).body,
    );
    expect(detail.downloadsLast7Days).toBe(1 + 7);
    expect(detail.downloadsLast30Days).toBe(1 + 7 + 8 + 30);
    const counts = detail.dailyDownloads?.counts ?? [];
    expect(counts[29]).toBe(1);
    expect(counts[23]).toBe(7);
    expect(counts[22]).toBe(8);
    expect(counts[0]).toBe(30);
    expect(counts.reduce((a, b) => a + b, 0)).toBe(detail.downloadsLast30Days);
  });

  it('the ETag carries the UTC day, since the recent downloads move with it', async () => {
    const res = await request(t.app).get('/api/packages/@owner-1/pkg-010').expect(200);
    const day = Math.floor(Date.now() / 86_400_000);
    expect(res.headers.etag).toMatch(new RegExp(`^"[0-9a-f-]{36}\\.\\d+\\.${day}\\.json"$`));
  });

  it('the fold leaves updated_at alone (a download is no change of the package)', async () => {
    const read = () =>
      t.db
        .selectFrom('packages')
        .select(['updated_at', 'row_version'])
        .where('name', '=', 'pkg-011')
        .executeTakeFirstOrThrow();
    const before = await read();
    await request(t.app).post('/api/packages/@owner-2/pkg-011/track').expect(200);
    await foldAllDownloadDeltas(t.db);
    const after = await read();
    expect(after.updated_at).toEqual(before.updated_at);
    expect(after.row_version).toBe(before.row_version + 1);
  });

  it('the popularity positions follow the folds on their refresh, and only then', async () => {
    await refreshPopularity(t.db);
    expect(await refreshPopularity(t.db)).toBe(false);
    for (let i = 0; i < 40; i += 1)
      await request(t.app)
        .post('/api/packages/@owner-0/pkg-000/track')
        .set('X-Forwarded-For', `203.0.113.${i + 1}`)
        .expect(200);
    await foldAllDownloadDeltas(t.db);
    expect(await refreshPopularity(t.db)).toBe(true);
    const top = await request(t.app).get('/api/packages?sort=trending&order=desc&pageSize=1').expect(200);
    expect(top.body.data.map(keyOf)).toEqual(['owner-0/pkg-000']);
    const most = await request(t.app).get('/api/packages?sort=downloads&order=desc&pageSize=3').expect(200);
    expect(most.body.data.map(keyOf)).toEqual((await expected({}, 'downloads', 'desc')).slice(0, 3));
  });
});
