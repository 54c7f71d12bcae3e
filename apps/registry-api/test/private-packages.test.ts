import type { RequestListener } from 'node:http';
import { createToken } from '@pkgreg/accounts';
import {
  FeedResponseSchema,
  ListQuerySchema,
  type ListResponse,
  PackageDetailSchema,
  VersionDetailSchema,
} from '@pkgreg/contracts';
import type { Db } from '@pkgreg/db';
import { insertAccounts, insertOrganisation, TEST_REDIS_URL, testKeyPrefix } from '@pkgreg/db/testing';
import { useTestDatabase } from '@pkgreg/db/vitest';
import { indexSource } from '@pkgreg/indexer';
import { skillMd } from '@pkgreg/indexer/testing';
import { privateReadableSql, type ReadAccess, refreshDependencyState } from '@pkgreg/registry';
import { FakeGitHub, type FakeRepo } from '@pkgreg/testing';
import { Redis } from 'ioredis';
import { sql } from 'kysely';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp, createRegistry } from '../src/app.js';
import { loadEnv } from '../src/env.js';
import { refreshDerivedTables } from '../src/packages/derived-tables-refresher.js';
import { DEFAULT_LIST_OPTIONS, type ListOptions, listPackages } from '../src/packages/list.service.js';
import { readListChangeCounter } from '../src/packages/packages.repository.js';
import { searchesPositions, searchPrivate } from '../src/search/private-search.repository.js';
import { searchPackages } from '../src/search/search.service.js';
import { rankingOrder, tierOf } from '../src/search/search-ranking.js';
import { anywhereQuery } from '../src/search/search-sql.js';
import { countSearchDocs } from '../src/search/search-statistics.repository.js';
import { searchLexemes } from '../src/search/search-terms.js';
import { insertPackages, packageRow, silentLogger } from './fixtures.js';

// Private packages (docs/accounts.md, "Private skills"; docs/search.md and docs/caching.md): to anyone
// not allowed, a private package does not exist on any read path (the same status, body and headers as
// a missing one; no count, position or facet moved), and a reader with private access sees it merged
// into lists and search with exact totals and pages. Skills are indexed by the real indexer from a
// local server speaking GitHub's REST API; `private` is set in the database, as the visibility service
// will set it.

const database = useTestDatabase();
let gh: FakeGitHub;
let redis: Redis;
let app: RequestListener;
/** A read token of a reader of the organisation owning `@secret`, and one of an account in none. */
let memberToken: string;
let outsiderToken: string;
const asMember = () => ({ Authorization: `Bearer ${memberToken}` });
const asOutsider = () => ({ Authorization: `Bearer ${outsiderToken}` });

const skill = (name: string, extra: string[] = [], dependencies?: string) =>
  skillMd([
    `name: ${name}`,
    `description: The ${name} skill for vault work.`,
    'version: 1.0.0',
    ...extra,
    ...(dependencies === undefined ? [] : ['metadata:', `  dependencies: "${dependencies}"`]),
  ]);

const repo = (owner: string, name: string, stars: number, files: Record<string, string>): FakeRepo => ({
  owner,
  name,
  defaultBranch: 'main',
  stars,
  license: 'MIT',
  homepage: null,
  files,
});

const crawl = (locator: string) =>
  indexSource(
    { db: database.db, github: { apiUrl: gh.apiUrl, webUrl: 'https://github.example' } },
    { kind: 'github', locator },
  );

/** A member of the organisation owning the `secret` scope. */
const MEMBER: ReadAccess = { scopes: ['secret'], packages: [] };
/** A member of an organisation of 40 private packages, and of the `secret` one. */
const BIG: ReadAccess = { scopes: ['bigorg', 'secret'], packages: [] };
/** A member of the organisation owning `bigorg` and `labs` (read as one group), and of `secret`'s. */
const WHOLE_BIG: ReadAccess = { scopes: ['bigorg', 'labs', 'secret'], packages: [] };
/** A token limited to one private package. */
const ONE_PACKAGE: ReadAccess = { scopes: [], packages: ['secret/hidden'] };

/** The headers that must match between a private and a missing package (not the per-request ones). */
function comparable(headers: Record<string, unknown>): Record<string, unknown> {
  const { 'x-request-id': _id, date: _date, connection: _c, 'keep-alive': _k, ...rest } = headers;
  return rest;
}

/** Everything a client could tell apart: status, body bytes and headers. */
async function answer(method: 'get' | 'post', path: string, headers: Record<string, string> = {}) {
  let req = request(app)[method](path);
  for (const [name, value] of Object.entries(headers)) req = req.set(name, value);
  if (path.endsWith('/reports')) req = req.send({ reason: 'spam' });
  const res = await req;
  return { status: res.status, text: res.text, headers: comparable(res.headers) };
}

beforeAll(async () => {
  gh = new FakeGitHub('', 'https://github.example');
  await gh.start();
  gh.addRepo(repo('octo', 'skills', 5, { 'pdf/SKILL.md': skill('pdf') }));
  gh.addRepo(
    repo('acme', 'tools', 50, {
      'open/SKILL.md': skill('open', [], '@secret/hidden@^1, @octo/pdf'),
      'plain/SKILL.md': skill('plain'),
    }),
  );
  gh.addRepo(
    repo('secret', 'vault', 20, {
      'hidden/SKILL.md': skill('hidden'),
      'also/SKILL.md': skill('also', [], '@secret/hidden'),
      'leak/SKILL.md': skill('leak', [], '@octo/pdf'),
    }),
  );
  redis = new Redis(TEST_REDIS_URL, { lazyConnect: true, keyPrefix: `${testKeyPrefix('private')}:` });
  const env = loadEnv({
    GITHUB_API_URL: gh.apiUrl,
    GITHUB_WEB_URL: 'https://github.example',
    DETAIL_CACHE_TTL_MS: '60000',
  });
  app = createApp({ db: database.db, redis, logger: silentLogger, env });
  await crawl('octo/skills');
  await crawl('secret/vault');
  await crawl('acme/tools');
  // Public packages of every shape around them, so that pages and positions have something to merge.
  await insertPackages(
    database.db,
    Array.from({ length: 12 }, (_, i) =>
      packageRow({
        scope: 'bulk',
        name: `vault-${String(i).padStart(2, '0')}`,
        description: `The vault helper ${i}.`,
        repo_stars: (i * 7) % 40,
        last_indexed_at: new Date(Date.UTC(2026, 10, 1 + i)).toISOString(),
        kind: i % 3 === 0 ? 'workflow' : 'skill',
      }),
    ),
  );
  // A larger organisation: its 40 private packages take the merge's search more than one round.
  await insertPackages(
    database.db,
    Array.from({ length: 40 }, (_, i) =>
      packageRow({
        scope: 'bigorg',
        name: `tool-${String((i * 17) % 40).padStart(2, '0')}`,
        repo_stars: (i * 13) % 45,
        last_indexed_at: new Date(Date.UTC(2026, 9, 1 + i)).toISOString(),
        visibility: 'private',
      }),
    ),
  );
  // A second private scope of bigorg's organisation: the two are searched as one group of positions.
  await insertPackages(
    database.db,
    ['vault-notes', 'big-tool-labs', 'drafts'].map((name, i) =>
      packageRow({ scope: 'labs', name, description: `The labs ${name}.`, repo_stars: 10 * i }),
    ),
  );
  // Private from its first row: the sync feed must never name it.
  await insertPackages(database.db, [
    packageRow({
      scope: 'secret',
      name: 'born-private',
      description: 'The born vault.',
      visibility: 'private',
    }),
  ]);
  // The scope turns private (the database derives packages.private from scope_settings), then what the
  // visibility service does after: the dependency counts.
  const ids = await database.db.selectFrom('packages').select('id').where('scope', '=', 'secret').execute();
  await insertAccounts(database.db, ['member', 'outsider']);
  await insertOrganisation(database.db, {
    id: 'org-secret',
    name: 'Secret',
    slug: 'secret',
    members: { member: 'reader' },
    scopes: { secret: 'private' },
  });
  await insertOrganisation(database.db, {
    id: 'org-big',
    slug: 'bigorg',
    scopes: { bigorg: 'public', labs: 'private' },
  });
  const token = (account: string) =>
    createToken(
      database.db,
      account,
      { name: 'reads', permission: 'read', expiresInDays: 30 },
      { maxDays: 90 },
    );
  memberToken = (await token('member')).token;
  outsiderToken = (await token('outsider')).token;
  await refreshDependencyState(database.db, {
    packageIds: ids.map((r) => r.id),
    changedIds: ids.map((r) => r.id),
  });
  await refreshDerivedTables(database.db);
}, 60_000);

afterAll(async () => {
  redis?.disconnect();
  await gh?.stop();
});

const PATHS: Array<[method: 'get' | 'post', tail: string]> = [
  ['get', ''],
  ['get', '/skill-md'],
  ['get', '/source'],
  ['get', '/versions'],
  ['get', '/versions/latest'],
  ['get', '/versions/1.0.0'],
  ['get', '/versions/latest/files/SKILL.md'],
  ['get', '/versions/1.0.0/files/SKILL.md'],
  ['get', '/versions/latest/archive.tgz'],
  ['get', '/versions/1.0.0/archive.tgz'],
  ['get', '/dependants'],
  ['post', '/track'],
  ['post', '/reports'],
];

/**
 * searchPrivate's rows and total for `q` as `access` against the live statement's (every private row the
 * terms match, tiered and ranked), whole and cut to a 3-row page (cut from the tiers' positions alone).
 */
async function expectLiveAnswer(db: Db, access: ReadAccess, q: string, label: string) {
  const lexemes = searchLexemes(q);
  const found = await searchPrivate(db, access, lexemes, {}, 100);
  const { rows } = await sql<{ key: string }>`
    select p.scope || '/' || p.name || ' ' || ${tierOf(sql`p.search_vector`, lexemes)}
      || ' ' || p.repo_stars || ' ' || p.description as key from packages p
    where ${privateReadableSql(access, 'p')} and p.status <> 'delisted' and p.quarantined_at is null
      and p.search_vector @@ ${anywhereQuery(lexemes)}
    order by ${tierOf(sql`p.search_vector`, lexemes)}, ${rankingOrder('p')}`.execute(db);
  const keys = rows.map((r) => r.key);
  const keyOf = (r: { scope: string; name: string; tier: number; repo_stars: number; description: string }) =>
    `${r.scope}/${r.name} ${r.tier} ${r.repo_stars} ${r.description}`;
  expect(found.rows.map(keyOf), label).toEqual(keys);
  expect(found.total, label).toBe(keys.length);
  const top = await searchPrivate(db, access, lexemes, {}, 3);
  expect(top.rows.map(keyOf), `${label}, 3 rows`).toEqual(keys.slice(0, 3));
  expect(top.total, `${label}, 3 rows`).toBe(keys.length);
  return found;
}
describe('to anyone not allowed, a private package answers exactly as a missing one', () => {
  it.each(PATHS)('%s …%s: same status, body and headers', async (method, tail) => {
    // Warm the detail cache with the private package first: it must not answer from it.
    await request(app).get('/api/packages/@secret/hidden');
    const hidden = await answer(method, `/api/packages/@secret/hidden${tail}`);
    const missing = await answer(method, `/api/packages/@secret/nothing${tail}`);
    expect(hidden.status).toBe(404);
    expect(hidden).toEqual(missing);
  });

  it.each(PATHS)(
    '%s …%s: the same with a matching If-None-Match and with credentials',
    async (method, tail) => {
      const variants: Array<Record<string, string>> = [
        { 'If-None-Match': '*' },
        asOutsider(),
        { ...asOutsider(), 'If-None-Match': '*' },
        { Cookie: 'pkgreg.session_token=forgotten' },
      ];
      for (const headers of variants) {
        const hidden = await answer(method, `/api/packages/@secret/hidden${tail}`, headers);
        const missing = await answer(method, `/api/packages/@secret/nothing${tail}`, headers);
        expect(hidden.status).toBe(404);
        expect(hidden).toEqual(missing);
      }
    },
  );

  it('a public package answers on the same paths (the fixture serves them)', async () => {
    await request(app).get('/api/packages/@acme/open/versions/1.0.0/archive.tgz').expect(200);
    await request(app).get('/api/packages/@acme/open/skill-md').expect(200);
  });
});

describe('no count, position or name moved for outsiders', () => {
  const list = async (query: string) =>
    (await request(app).get(`/api/packages${query}`).expect(200)).body as ListResponse;
  const publicNames = async () =>
    (
      await database.db
        .selectFrom('packages')
        .select(['scope', 'name'])
        .where('private', '=', false)
        .execute()
    )
      .map((r) => `@${r.scope}/${r.name}`)
      .sort();

  it('list: every order and its total hold public packages only', async () => {
    const expected = await publicNames();
    for (const sort of ['name', 'stars', 'indexed', 'downloads', 'trending']) {
      const page = await list(`?sort=${sort}&pageSize=100`);
      expect(page.total).toBe(expected.length);
      expect(page.data.map((p) => `@${p.scope}/${p.name}`).sort()).toEqual(expected);
    }
  });

  it('list with filters: facet counts leave private packages out', async () => {
    expect((await list('?owner=secret')).total).toBe(0);
    const skills = await database.db
      .selectFrom('packages')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('private', '=', false)
      .where('kind', '=', 'skill')
      .executeTakeFirstOrThrow();
    expect((await list('?kind=skill&pageSize=100')).total).toBe(Number(skills.n));
  });

  it('search: neither results nor total name a private package, whatever the plan', async () => {
    for (const q of ['hidden', 'vault', 'v', 'secret']) {
      const res = await request(app).get(`/api/search?q=${q}`).expect(200);
      expect(res.body.results.map((r: { scope: string }) => r.scope)).not.toContain('secret');
    }
    expect((await request(app).get('/api/search?q=hidden').expect(200)).body.total).toBe(0);
    const vault = await request(app).get('/api/search?q=vault').expect(200);
    // The 12 bulk helpers and @acme/open and @acme/plain ("for vault work"), @octo/pdf too.
    expect(vault.body.total).toBe(15);
  });

  it('detail and versions of a public package do not name its private dependency', async () => {
    const open = PackageDetailSchema.parse(
      (await request(app).get('/api/packages/@acme/open').expect(200)).body,
    );
    expect(open.dependencies).toEqual([{ name: '@octo/pdf', range: null, resolves: true }]);
    expect(open.depCount).toBe(1);
    const version = VersionDetailSchema.parse(
      (await request(app).get('/api/packages/@acme/open/versions/1.0.0').expect(200)).body,
    );
    expect(version.dependencies).toEqual([{ name: '@octo/pdf', range: null }]);
    // Only the public package's own SKILL.md still says what its author wrote there.
    const { skillMdRaw: _raw, frontmatter: _frontmatter, ...fields } = open;
    expect(JSON.stringify(fields)).not.toContain('secret');
  });

  it('dependants and their count leave private dependants out', async () => {
    const pdf = PackageDetailSchema.parse(
      (await request(app).get('/api/packages/@octo/pdf').expect(200)).body,
    );
    expect(pdf.dependantCount).toBe(1);
    const page = await request(app).get('/api/packages/@octo/pdf/dependants').expect(200);
    expect(page.body.total).toBe(1);
    expect(page.body.data.map((p: { name: string }) => p.name)).toEqual(['open']);
  });

  it('the feed lists a package that turned private as removed, with nothing of it, and never one born private', async () => {
    const feed = FeedResponseSchema.parse(
      (await request(app).get('/api/packages?limit=100').expect(200)).body,
    );
    const secret = feed.data.filter((p) => p.scope === 'secret');
    expect(secret.map((p) => p.name).sort()).toEqual(['also', 'hidden', 'leak']);
    for (const item of secret) {
      expect(item).toMatchObject({
        status: 'removed',
        description: '',
        tags: [],
        version: null,
        sourceRepo: '',
      });
    }
  });

  it('track of a private package counts nothing', async () => {
    await request(app).post('/api/packages/@secret/hidden/track').expect(404);
    const row = await database.db
      .selectFrom('package_download_batches')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where(sql<boolean>`package_ids && (select array_agg(id) from packages where scope = 'secret')`)
      .executeTakeFirstOrThrow();
    expect(Number(row.n)).toBe(0);
  });
});

describe('caching: answers that depend on who asks are never shared', () => {
  it('cacheable reads vary on the credentials', async () => {
    for (const path of [
      '/api/packages',
      '/api/search?q=vault',
      '/api/packages/@acme/open',
      '/api/packages/@acme/open/skill-md',
      '/api/packages/@acme/open/versions',
      '/api/packages/@acme/open/versions/1.0.0/archive.tgz',
      '/api/packages/@octo/pdf/dependants',
      '/api/packages/@acme/open/source',
    ]) {
      const res = await request(app).get(path);
      expect(res.headers.vary, path).toMatch(/^Authorization, Cookie\b/);
      expect(res.headers['cache-control'], path).toMatch(/^public/);
    }
  });

  it("an outsider's ETags never move with a private package's changes; a member's do", async () => {
    const local = createApp({
      db: database.db,
      redis,
      logger: silentLogger,
      env: loadEnv({ CATALOG_VALIDATOR_TTL_MS: '0' }),
    });
    const paths = ['/api/packages', '/api/search?q=vault', '/api/packages/@octo/pdf/dependants'];
    const etags = (headers: Record<string, string> = {}) =>
      Promise.all(
        paths.map(async (path) => (await request(local).get(path).set(headers).expect(200)).headers.etag),
      );
    const touch = (scope: string, name: string) =>
      database.db
        .updateTable('packages')
        .set({ homepage_url: `https://example.test/${Date.now()}` })
        .where('scope', '=', scope)
        .where('name', '=', name)
        .execute();
    const outsider = await etags();
    const member = await etags(asMember());
    await touch('secret', 'hidden');
    expect(await etags()).toEqual(outsider);
    const memberAfter = await etags(asMember());
    for (const [i, etag] of memberAfter.entries()) expect(etag, paths[i]).not.toBe(member[i]);
    // A public package's change moves everyone's.
    await touch('acme', 'open');
    const outsiderAfter = await etags();
    for (const [i, etag] of outsiderAfter.entries()) expect(etag, paths[i]).not.toBe(outsider[i]);
  });

  it('an answer to a request with credentials is private, no-store', async () => {
    for (const headers of [asOutsider(), asMember(), { Cookie: 'pkgreg.session_token=abc' }]) {
      for (const path of [
        '/api/packages',
        '/api/search?q=vault',
        '/api/packages/@acme/open',
        '/api/packages/@acme/open/skill-md',
        '/api/packages/@acme/open/versions/latest',
        '/api/packages/@acme/open/source',
      ]) {
        let req = request(app).get(path);
        for (const [name, value] of Object.entries(headers)) req = req.set(name, value);
        const res = await req;
        expect(res.headers['cache-control'], path).toBe('private, no-store');
        expect(res.headers.vary, path).toMatch(/^Authorization, Cookie\b/);
      }
    }
  });
});

/** Every package `access` sees in the list order `sort`/`order`, computed from the rows themselves. */
async function expectedOrder(access: ReadAccess, sort: string, order: 'asc' | 'desc', kind?: string) {
  const rows = await database.db
    .selectFrom('packages')
    .select(['scope', 'name', 'repo_stars', 'last_indexed_at', 'unique_download_count', 'private', 'kind'])
    .where('status', '<>', 'delisted')
    .execute();
  const seen = rows.filter(
    (r) =>
      (!r.private || access.scopes.includes(r.scope) || access.packages.includes(`${r.scope}/${r.name}`)) &&
      (kind === undefined || r.kind === kind),
  );
  const key = (r: (typeof rows)[number]): string | number =>
    sort === 'name'
      ? r.name
      : sort === 'stars'
        ? r.repo_stars
        : sort === 'indexed'
          ? r.last_indexed_at.getTime()
          : sort === 'downloads'
            ? Number(r.unique_download_count)
            : 0;
  const cmp = (a: string | number, b: string | number) => (a < b ? -1 : a > b ? 1 : 0);
  seen.sort(
    (a, b) =>
      (order === 'asc' ? cmp(key(a), key(b)) : cmp(key(b), key(a))) ||
      cmp(a.scope, b.scope) ||
      cmp(a.name, b.name),
  );
  return seen.map((r) => `@${r.scope}/${r.name}`);
}

describe('a reader with private access (the services, given its ReadAccess)', () => {
  const page = (access: ReadAccess, query: Record<string, string>, options: Partial<ListOptions> = {}) =>
    listPackages(database.db, ListQuerySchema.parse(query), { ...DEFAULT_LIST_OPTIONS, ...options }, access);

  it.each([
    ['name', 'asc'],
    ['name', 'desc'],
    ['stars', 'asc'],
    ['stars', 'desc'],
    ['indexed', 'asc'],
    ['indexed', 'desc'],
    ['downloads', 'desc'],
    ['trending', 'asc'],
  ] as const)(
    'list by %s %s: pages of 4 walk the merged order exactly, total included, placed either way',
    async (sort, order) => {
      // shallowPlaces 0: every page placed by the search over the private packages (deep pages).
      for (const [access, shallowPlaces] of [MEMBER, ONE_PACKAGE, BIG].flatMap((a) => [
        [a, 100] as const,
        [a, 0] as const,
      ])) {
        const expected = await expectedOrder(access, sort, order);
        const seen: string[] = [];
        for (let p = 1; p <= Math.ceil(expected.length / 4) + 1; p += 1) {
          const res = await page(access, { sort, order, page: String(p), pageSize: '4' }, { shallowPlaces });
          expect(res.total).toBe(expected.length);
          seen.push(...res.data.map((d) => `@${d.scope}/${d.name}`));
        }
        expect(seen).toEqual(expected);
      }
    },
  );

  it.each(['facets', 'walk'] as const)(
    'a filtered list merges too (public page read by %s)',
    async (filteredBy) => {
      for (const access of [MEMBER, BIG]) {
        const expected = await expectedOrder(access, 'stars', 'desc', 'skill');
        const seen: string[] = [];
        for (let p = 1; p <= Math.ceil(expected.length / 3) + 1; p += 1) {
          const res = await page(
            access,
            { sort: 'stars', order: 'desc', kind: 'skill', page: String(p), pageSize: '3' },
            { filteredBy },
          );
          expect(res.total).toBe(expected.length);
          seen.push(...res.data.map((d) => `@${d.scope}/${d.name}`));
        }
        expect(seen).toEqual(expected);
      }
      expect((await page(MEMBER, { owner: 'secret' })).total).toBe(4);
      expect((await page(BIG, { owner: 'bigorg' })).total).toBe(40);
    },
  );

  it('search: private matches merged in ranking order, total adding them', async () => {
    const open = await searchPackages(database.db, 'hidden');
    expect(open.total).toBe(0);
    const member = await searchPackages(database.db, 'hidden', undefined, undefined, MEMBER);
    // By name only: @secret/also declares it as a dependency, which search does not read.
    expect(member.results.map((r) => `@${r.scope}/${r.name}`)).toEqual(['@secret/hidden']);
    expect(member.total).toBe(1);
    const vault = await searchPackages(database.db, 'vault', undefined, undefined, MEMBER);
    expect(vault.total).toBe(15 + 4);
    // The bulk helpers by name (tier 0) first; then descriptions (tier 2) by stars, private ones in place.
    const names = vault.results.map((r) => `@${r.scope}/${r.name}`);
    expect(names.slice(0, 12).every((n) => n.startsWith('@bulk/'))).toBe(true);
    expect(names.slice(12)).toEqual([
      '@acme/open',
      '@acme/plain',
      '@secret/also',
      '@secret/hidden',
      '@secret/leak',
      '@secret/born-private',
      '@octo/pdf',
    ]);
    const limited = await searchPackages(database.db, 'vault', undefined, undefined, ONE_PACKAGE);
    expect(limited.total).toBe(16);
  });

  it('search: positions and live reads find exactly the private rows the terms match, tiered in order', async () => {
    // Prefixes of 1, 2-4 (one stored key) and 5+ characters, stems, two terms, scope-only terms, quotes.
    const queries = [
      'v',
      'va',
      'vau',
      'vault',
      'vaults',
      'helper',
      'hid',
      'hidden',
      'secret',
      'big tool',
      'tool 17',
      'bigorg',
      'the vault',
      "o'brien",
      'born-private',
      'fresh',
      'nothing',
      'x'.repeat(120),
    ];
    // Whole scopes without filters are answered from positions, the others by the live statement;
    // WHOLE_BIG reads bigorg's organisation as a group, BIG reads bigorg alone (not the whole group).
    const readers = [MEMBER, BIG, WHOLE_BIG, ONE_PACKAGE];
    const groups = await database.db.selectFrom('package_private_search_groups').selectAll().execute();
    expect(groups.sort((a, b) => a.scope.localeCompare(b.scope))).toEqual([
      { scope: 'bigorg', grp: '~org-big', size: 2 },
      { scope: 'labs', grp: '~org-big', size: 2 },
    ]);
    const compare = async (stage: string) => {
      for (const access of readers) {
        for (const q of queries) {
          const label = `${stage}: ${q} as ${JSON.stringify(access)}`;
          const found = await expectLiveAnswer(database.db, access, q, label);
          // From positions, the same statement reads the public catalog's count for the public plans.
          expect(found.docs, label).toBe(
            searchesPositions(access, {}) ? await countSearchDocs(database.db) : undefined,
          );
        }
      }
    };
    await compare('as rebuilt');
    // WHOLE_BIG reads the group's keys, not its scopes': with the scopes' own keys gone (inside the
    // transaction only) it gets the answer it gets with every key in place (outside it).
    const rollback = new Error('rollback');
    await database.db
      .transaction()
      .execute(async (trx) => {
        await sql`delete from package_private_search_keys
          where key like 'bigorg/%' or key like 'labs/%'`.execute(trx);
        for (const q of ['big tool', 'vault', 'labs']) {
          const withoutScopeKeys = await searchPrivate(trx, WHOLE_BIG, searchLexemes(q), {}, 100);
          const withEveryKey = await searchPrivate(database.db, WHOLE_BIG, searchLexemes(q), {}, 100);
          expect(withoutScopeKeys.total, q).toBeGreaterThan(0);
          expect(withoutScopeKeys, q).toEqual(withEveryKey);
        }
        throw rollback;
      })
      .catch((error: unknown) => {
        if (error !== rollback) throw error;
      });
    // Changed since the rebuild: a match lost, one gained, one new, one turned public, one delisted. The
    // rows changed are read live and their stored positions left out, counts included.
    const changes = [
      sql`update packages set description = 'Nothing to see.' where scope = 'secret' and name = 'leak'`,
      sql`update packages set description = 'A fresh big tool.', repo_stars = 99 where scope = 'bigorg' and name = 'tool-05'`,
      sql`update packages set visibility = 'public' where scope = 'bigorg' and name = 'tool-17'`,
      sql`update packages set status = 'delisted' where scope = 'bigorg' and name = 'tool-21'`,
      sql`update packages set description = 'The labs vault drafts.' where scope = 'labs' and name = 'drafts'`,
    ];
    const before = await database.db
      .selectFrom('packages')
      .selectAll()
      .where('scope', 'in', ['secret', 'bigorg', 'labs'])
      .execute();
    const staleNames = async () =>
      (
        await sql<{ key: string }>`
          select scope || '/' || name as key from packages p
          where not pg_visible_in_snapshot(p.updated_xid, (select mark from package_private_search_docs where ord = 1))`.execute(
          database.db,
        )
      ).rows.map((r) => r.key);
    const staleBefore = await staleNames();
    try {
      for (const change of changes) await change.execute(database.db);
      // Inserted as the indexer does, without a rebuild.
      await database.db
        .insertInto('packages')
        .values(
          packageRow({
            scope: 'bigorg',
            name: 'fresh-vault',
            description: 'A fresh vault.',
            visibility: 'private',
          }),
        )
        .execute();
      // Exactly these rows are past the rebuild's snapshot (and those earlier tests changed).
      expect((await staleNames()).filter((key) => !staleBefore.includes(key)).sort()).toEqual([
        'bigorg/fresh-vault',
        'bigorg/tool-05',
        'bigorg/tool-17',
        'bigorg/tool-21',
        'labs/drafts',
        ...(staleBefore.includes('secret/leak') ? [] : ['secret/leak']),
      ]);
      await compare('changed since');
    } finally {
      // Back as it was, the new one delisted (packages are never deleted); all of them read live.
      await sql`update packages set status = 'delisted' where scope = 'bigorg' and name = 'fresh-vault'`.execute(
        database.db,
      );
      for (const row of before) {
        await sql`update packages set description = ${row.description}, repo_stars = ${row.repo_stars},
            visibility = ${row.visibility}, status = ${row.status}
          where id = ${row.id}`.execute(database.db);
      }
    }
    await compare('restored');
  });
});

describe('an older release beside this one', () => {
  it("a member's search answers the same while the private docs lack their result columns", async () => {
    // What an older release's rebuild swaps in during a rolling update: docs without the result columns.
    const queries = ['vault', 'big tool', 'hidden', 'va'];
    const answers = async () =>
      Promise.all(queries.map((q) => searchPackages(database.db, q, undefined, undefined, WHOLE_BIG)));
    const expected = await answers();
    expect(expected[0]?.total).toBeGreaterThan(0);
    await sql`alter table package_private_search_docs drop column description`.execute(database.db);
    try {
      expect(await answers()).toEqual(expected);
    } finally {
      await refreshDerivedTables(database.db);
    }
    expect(await answers()).toEqual(expected);
  });
});

describe('a member of the organisation, with a read token (the real resolver)', () => {
  const OK: Record<string, number> = { '/source': 302, '/reports': 201 };

  it.each(PATHS)('%s …%s: answered, private and never stored', async (method, tail) => {
    const res = await answer(method, `/api/packages/@secret/hidden${tail}`, asMember());
    expect(res.status).toBe(OK[tail] ?? 200);
    expect(res.headers['cache-control']).toMatch(/no-store/);
  });

  it('a bad token is a 401 alike for a private and a missing package', async () => {
    const bad = { Authorization: 'Bearer pkgreg_not_a_token' };
    const hidden = await answer('get', '/api/packages/@secret/hidden', bad);
    const missing = await answer('get', '/api/packages/@secret/nothing', bad);
    expect(hidden.status).toBe(401);
    expect(hidden).toEqual(missing);
  });

  it('list: its private packages merged in, total included, pages exact', async () => {
    const expected = await expectedOrder(MEMBER, 'name', 'asc');
    const seen: string[] = [];
    for (let p = 1; p <= Math.ceil(expected.length / 5); p += 1) {
      const res = await request(app)
        .get(`/api/packages?sort=name&pageSize=5&page=${p}`)
        .set(asMember())
        .expect(200);
      expect(res.headers['cache-control']).toBe('private, no-store');
      expect(res.body.total).toBe(expected.length);
      seen.push(...res.body.data.map((d: { scope: string; name: string }) => `@${d.scope}/${d.name}`));
    }
    expect(seen).toEqual(expected);
    // An outsider's list under the same query has its own ETag (the member's holds more).
    const outsider = await request(app)
      .get('/api/packages?sort=name&pageSize=5')
      .set(asOutsider())
      .expect(200);
    const member = await request(app).get('/api/packages?sort=name&pageSize=5').set(asMember()).expect(200);
    expect(member.headers.etag).not.toBe(outsider.headers.etag);
    await request(app)
      .get('/api/packages?sort=name&pageSize=5')
      .set({ ...asOutsider(), 'If-None-Match': String(member.headers.etag) })
      .expect(200);
  });

  it('search, detail, dependencies and dependants show it its private packages', async () => {
    const found = await request(app).get('/api/search?q=hidden').set(asMember()).expect(200);
    expect(found.body).toMatchObject({ total: 1, results: [{ scope: 'secret', name: 'hidden' }] });
    const open = await request(app).get('/api/packages/@acme/open').set(asMember()).expect(200);
    expect(open.body.dependencies).toEqual([
      { name: '@secret/hidden', range: '^1', resolves: true },
      { name: '@octo/pdf', range: null, resolves: true },
    ]);
    expect(open.body.depCount).toBe(2);
    // Anyone else still gets the cached public detail, with its own ETag.
    const anonymous = await request(app).get('/api/packages/@acme/open').expect(200);
    expect(anonymous.body.depCount).toBe(1);
    expect(anonymous.headers.etag).not.toBe(open.headers.etag);
    const dependants = await request(app)
      .get('/api/packages/@octo/pdf/dependants')
      .set(asMember())
      .expect(200);
    expect(dependants.body.total).toBe(2);
    expect(dependants.body.data.map((p: { name: string }) => p.name)).toEqual(['open', 'leak']);
  });

  it('track of its private package is counted', async () => {
    await request(app).post('/api/packages/@secret/hidden/track').set(asMember()).expect(200, { ok: true });
    const row = await database.db
      .selectFrom('package_download_batches')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where(
        sql<boolean>`package_ids && (select array_agg(id) from packages where scope = 'secret' and name = 'hidden')`,
      )
      .executeTakeFirstOrThrow();
    expect(Number(row.n)).toBeGreaterThan(0);
  });
});

describe('a package that turns private', () => {
  it('leaves pages and search at once, the detail cache within 2 x its TTL, the derived tables at the next refresh', async () => {
    const registry = createRegistry({
      db: database.db,
      redis,
      logger: silentLogger,
      env: loadEnv({ GITHUB_WEB_URL: 'https://github.example', DETAIL_CACHE_TTL_MS: '30' }),
    });
    const local = registry.handler;
    const plain = '/api/packages/@acme/plain';
    await request(local).get(plain).expect(200);
    const total = (await request(local).get('/api/packages?pageSize=100').expect(200)).body.total;
    const docs = await countSearchDocs(database.db);
    const counter = await readListChangeCounter(database.db);

    await database.db
      .updateTable('packages')
      .set({ visibility: 'private' })
      .where('scope', '=', 'acme')
      .where('name', '=', 'plain')
      .execute();
    try {
      // The refresher's trigger: a change of `private` moves the list-change counter.
      expect(await readListChangeCounter(database.db)).toBeGreaterThan(counter);
      // Read live: gone from the page (one short until the refresh) and from search at once.
      const page = await request(local).get('/api/packages?pageSize=100').expect(200);
      expect(page.body.data.map((p: { name: string }) => p.name)).not.toContain('plain');
      const found = await request(local).get('/api/search?q=plain').expect(200);
      expect(found.body.results).toEqual([]);
      // The detail cache drops it at its revalidation.
      await new Promise((resolve) => setTimeout(resolve, 70));
      await registry.cache.settled();
      await request(local).get(plain).expect(404);

      await refreshDerivedTables(database.db);
      expect((await request(local).get('/api/packages?pageSize=100').expect(200)).body.total).toBe(total - 1);
      expect(await countSearchDocs(database.db)).toBe(docs - 1);
      const feed = FeedResponseSchema.parse(
        (await request(local).get('/api/packages?limit=100').expect(200)).body,
      );
      expect(feed.data.find((p) => p.name === 'plain')).toMatchObject({ status: 'removed', description: '' });
    } finally {
      await database.db
        .updateTable('packages')
        .set({ visibility: 'public' })
        .where('scope', '=', 'acme')
        .where('name', '=', 'plain')
        .execute();
      await refreshDerivedTables(database.db);
    }
    expect((await request(local).get('/api/packages?pageSize=100').expect(200)).body.total).toBe(total);
  });
});

describe('groups of private positions: how a scope joins one, and readers of several or of a moved scope', () => {
  // Organisations of their own, so that no earlier test's groups or answers move: A owns `quilla` by its
  // settings and `quillhub` only through the code-host organisation linked to it; B owns `quillb` and
  // `quillb-two` by their settings and `quillb-gh` through its code-host organisation (its settings row
  // names none); C is linked to the code-host owner of `quillb-two`, which B's settings name instead.
  const ORG_A: ReadAccess = { scopes: ['quilla', 'quillhub'], packages: [] };
  const ORG_B: ReadAccess = { scopes: ['quillb', 'quillb-two', 'quillb-gh'], packages: [] };
  /** Both organisations, and beside them a scope of no group and one of bigorg's group alone. */
  const BOTH: ReadAccess = { scopes: [...ORG_A.scopes, ...ORG_B.scopes, 'secret', 'labs'], packages: [] };
  // Prefixes of 1, 2-4 and 5+ characters, a stem, two terms, scope terms, and a term of no quill scope.
  const queries = ['q', 'qu', 'quil', 'quill', 'quills', 'ink', 'quill ink', 'quillb', 'two', 'pen', 'vault'];

  beforeAll(async () => {
    const now = new Date();
    await insertOrganisation(database.db, {
      id: 'org-quill-a',
      slug: 'quilla',
      scopes: { quilla: 'private' },
    });
    await insertOrganisation(database.db, {
      id: 'org-quill-b',
      slug: 'quillb',
      scopes: { quillb: 'private', 'quillb-two': 'private' },
    });
    await insertOrganisation(database.db, { id: 'org-quill-c', slug: 'quillc' });
    for (const [id, githubOrgId] of [
      ['org-quill-a', 9_100_001],
      ['org-quill-b', 9_100_002],
      ['org-quill-c', 9_100_003],
    ] as const) {
      await database.db.updateTable('auth_organization').set({ githubOrgId }).where('id', '=', id).execute();
    }
    await database.db
      .insertInto('scope_settings')
      .values({ scope: 'quillb-gh', organization_id: null, account_id: null, visibility: 'private' })
      .execute();
    await database.db
      .insertInto('scope_owners')
      .values(
        (
          [
            ['quillhub', 9_100_001],
            ['quillb-gh', 9_100_002],
            ['quillb-two', 9_100_003],
          ] as const
        ).map(([scope, owner_id]) => ({
          scope,
          owner_id,
          owner_login: `${scope}-gh`,
          bound_by: 'index' as const,
          bound_at: now,
          updated_at: now,
        })),
      )
      .execute();
    // `quillhub` has no settings row: its packages are private by their own visibility, one is public.
    const rows: Array<[scope: string, name: string, description: string, visibility?: 'public']> = [
      ['quilla', 'ink-well', 'The quill ink well.'],
      ['quilla', 'quill-pen', 'A pen.'],
      ['quilla', 'nib', 'Quills and nibs.'],
      ['quillhub', 'quill-stand', 'Holds a pen.'],
      ['quillhub', 'paper', 'Paper for the quill.'],
      ['quillhub', 'open-ink', 'A public quill ink.', 'public'],
      ['quillb', 'quill-case', 'A case.'],
      ['quillb', 'ink-pot', 'The ink pot.'],
      ['quillb-two', 'blotter', 'Blots quill ink.'],
      ['quillb-two', 'quill-knife', 'Cuts pens.'],
      ['quillb-gh', 'sand', 'Drying sand for quill ink.'],
      ['quillb-gh', 'quill-sharpener', 'Two blades.'],
    ];
    await insertPackages(
      database.db,
      rows.map(([scope, name, description, visibility], i) =>
        packageRow({
          scope,
          name,
          description,
          repo_stars: (i * 11) % 17,
          visibility: visibility ?? 'private',
        }),
      ),
    );
  });

  /** The rows and total of searchPrivate against the live statement's, for each query; the totals. */
  const expectLiveAnswers = async (db: Db, access: ReadAccess, stage: string) => {
    expect(searchesPositions(access, {})).toBe(true);
    const totals: Record<string, number> = {};
    for (const q of queries) {
      const found = await expectLiveAnswer(db, access, q, `${stage}: ${q} as ${JSON.stringify(access)}`);
      totals[q] = found.total;
    }
    return totals;
  };

  /** Runs `check` with the keys `where` selects deleted, inside a transaction rolled back after. */
  const withoutKeys = async (where: string, check: (trx: Db) => Promise<void>) => {
    const rollback = new Error('rollback');
    await database.db
      .transaction()
      .execute(async (trx) => {
        const deleted = await sql`delete from package_private_search_keys where ${sql.raw(where)}`.execute(
          trx,
        );
        expect(Number(deleted.numAffectedRows), where).toBeGreaterThan(0);
        await check(trx);
        throw rollback;
      })
      .catch((error: unknown) => {
        if (error !== rollback) throw error;
      });
  };

  const quillGroups = () =>
    database.db
      .selectFrom('package_private_search_groups')
      .selectAll()
      .where('scope', 'like', 'quill%')
      .orderBy('scope')
      .execute();

  it("a scope owned only through the linked code-host organisation joins that organisation's group", async () => {
    // Settings name the organisation first: `quillb-two` is B's although C's code-host owner holds it,
    // so C has no group; `quillb-gh` is B's through its owner, its settings row naming none.
    expect(await quillGroups()).toEqual([
      { scope: 'quilla', grp: '~org-quill-a', size: 2 },
      { scope: 'quillb', grp: '~org-quill-b', size: 3 },
      { scope: 'quillb-gh', grp: '~org-quill-b', size: 3 },
      { scope: 'quillb-two', grp: '~org-quill-b', size: 3 },
      { scope: 'quillhub', grp: '~org-quill-a', size: 2 },
    ]);
    const groupKeys = await sql<{ n: number }>`
      select count(*)::int as n from package_private_search_keys where key like '~org-quill-a/%'`.execute(
      database.db,
    );
    expect(groupKeys.rows[0]?.n).toBeGreaterThan(0);
    const totals = await expectLiveAnswers(database.db, ORG_A, 'organisation A');
    // `quill` is a prefix of both scopes' names: every private package of A, the public `open-ink` not.
    expect(totals.quill).toBe(5);
  });

  it("a reader of two whole groups gets the live answer, from the groups' keys", async () => {
    const expected = await expectLiveAnswers(database.db, BOTH, 'both organisations');
    expect(expected.quill).toBeGreaterThan(9);
    // With the scopes' own keys gone (inside the transaction only) it still gets the live answer: it
    // reads `~org-quill-a` and `~org-quill-b`, and `labs` (not its whole group) by its own keys.
    await withoutKeys(
      `key like 'quilla/%' or key like 'quillhub/%' or key like 'quillb/%' or key like 'quillb-two/%' or key like 'quillb-gh/%'`,
      async (trx) => {
        expect(await expectLiveAnswers(trx, BOTH, 'without scope keys')).toEqual(expected);
      },
    );
  });

  /** Names `organization_id` in quillb-two's settings (B's by the fixture), with no rebuild. */
  const move = (organization_id: string) =>
    database.db
      .updateTable('scope_settings')
      .set({ organization_id })
      .where('scope', '=', 'quillb-two')
      .execute();

  it('a scope moved to another organisation after the rebuild: readers of either organisation get the live answer', async () => {
    const OLD_REST: ReadAccess = { scopes: ['quillb', 'quillb-gh'], packages: [] };
    const NEW_A: ReadAccess = { scopes: [...ORG_A.scopes, 'quillb-two'], packages: [] };
    await move('org-quill-a');
    try {
      // The groups stay as rebuilt: B's remaining scopes read part of it (their own keys), A's now read
      // A's group and the moved scope by its own keys.
      expect((await quillGroups()).find((g) => g.scope === 'quillb-two')?.grp).toBe('~org-quill-b');
      expect((await expectLiveAnswers(database.db, OLD_REST, 'moved, old organisation')).quill).toBe(4);
      expect((await expectLiveAnswers(database.db, NEW_A, 'moved, new organisation')).quill).toBe(7);
      // With A's scopes' own keys and B's group keys gone, both still get the live answer: A's readers
      // read A's group (and the moved scope's own keys), B's remaining scopes read only their own keys.
      await withoutKeys(
        `key like 'quilla/%' or key like 'quillhub/%' or key like '~org-quill-b/%'`,
        async (trx) => {
          await expectLiveAnswers(trx, OLD_REST, 'moved, old organisation, group keys gone');
          await expectLiveAnswers(trx, NEW_A, 'moved, new organisation, scope keys gone');
        },
      );
    } finally {
      await move('org-quill-b');
    }
  });

  it("a change of a scope's organisation or code-host owner moves the list-change counter: the refresher regroups", async () => {
    // Each change below is one the groups follow (migration 2026-11-30T0400); the refresher rebuilds the
    // derived tables when the counter has moved since its last rebuild.
    const moves = async (change: () => Promise<unknown>) => {
      const before = await readListChangeCounter(database.db);
      await change();
      return (await readListChangeCounter(database.db)) > before;
    };
    expect(await moves(() => move('org-quill-a'))).toBe(true);
    try {
      await refreshDerivedTables(database.db);
      expect((await quillGroups()).map((g) => `${g.scope} ${g.grp} ${g.size}`)).toEqual([
        'quilla ~org-quill-a 3',
        'quillb ~org-quill-b 2',
        'quillb-gh ~org-quill-b 2',
        'quillb-two ~org-quill-a 3',
        'quillhub ~org-quill-a 3',
      ]);
      await expectLiveAnswers(
        database.db,
        { scopes: [...ORG_A.scopes, 'quillb-two'], packages: [] },
        'regrouped',
      );
    } finally {
      expect(await moves(() => move('org-quill-b'))).toBe(true);
      await refreshDerivedTables(database.db);
    }
    const linkC = (githubOrgId: number) => () =>
      database.db
        .updateTable('auth_organization')
        .set({ githubOrgId })
        .where('id', '=', 'org-quill-c')
        .execute();
    expect(await moves(linkC(9_100_009))).toBe(true);
    expect(await moves(linkC(9_100_003))).toBe(true);
    const now = new Date();
    expect(
      await moves(() =>
        database.db
          .insertInto('scope_owners')
          .values({
            scope: 'quill-unbound',
            owner_id: 9_100_010,
            owner_login: 'quill-unbound-gh',
            bound_by: 'index',
            bound_at: now,
            updated_at: now,
          })
          .execute(),
      ),
    ).toBe(true);
    // A change the groups do not follow leaves the counter alone: a renamed owner's login.
    expect(
      await moves(() =>
        database.db
          .updateTable('scope_owners')
          .set({ owner_login: 'quill-renamed' })
          .where('scope', '=', 'quill-unbound')
          .execute(),
      ),
    ).toBe(false);
    // Its removal is one they follow, and leaves the file's database as the groups' tests found it.
    expect(
      await moves(() =>
        database.db.deleteFrom('scope_owners').where('scope', '=', 'quill-unbound').execute(),
      ),
    ).toBe(true);
    expect(await quillGroups()).toHaveLength(5);
  });
});
