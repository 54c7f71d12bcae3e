import { randomUUID } from 'node:crypto';
import { realpathSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { ListResponseSchema, SearchResponseSchema, VersionListResponseSchema } from '@pkgreg/contracts';
import { createDb } from '@pkgreg/db';
import { insertOrganisation } from '@pkgreg/db/testing';
import { indexSource } from '@pkgreg/indexer';
import { commitFiles, createRepo, removeDir, skillMd, tempDir } from '@pkgreg/indexer/testing';
import { checkpoint, logPendingVersions, removePackage } from '@pkgreg/registry';
import { sql } from 'kysely';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../src/app.js';
import { loadEnv } from '../src/env.js';
import { quarantinePackage } from '../src/moderation/moderation.repository.js';
import { refreshDerivedTables } from '../src/packages/derived-tables-refresher.js';
import { ROUTES, type RouteCache, type RouteId, routeOf } from '../src/routes/route-table.js';
import { silentLogger, useTestRegistry } from './fixtures.js';
import { newSigner } from './log-helpers.js';

// docs/caching.md: ETag and Cache-Control on every public GET, 304 on a held validator, new validators
// after a change, nothing private or failed kept by a cache, and a delisting, quarantine or removal
// reaching a cache within the documented bound. The TTLs are driven down by env; the server-side
// micro-caches are off here, so the bound is the Cache-Control itself (a cache must revalidate after
// max-age, and its revalidation must then see the change).

const t = useTestRegistry({
  HTTP_CACHE_MAX_AGE_S: '1',
  HTTP_CACHE_CDN_MAX_AGE_S: '2',
  CATALOG_VALIDATOR_TTL_MS: '0',
  DETAIL_CACHE_TTL_MS: '0',
});
const MOVING = 'public, max-age=1, must-revalidate';
const REVALIDATE = 'public, max-age=0, must-revalidate';
const IMMUTABLE = 'public, max-age=31536000, s-maxage=2, immutable';

let root: string;
let repo: string;
let pdfVersion: string;

const skill = (name: string, description: string, dependencies?: string) =>
  skillMd([
    `name: ${name}`,
    `description: ${description}`,
    ...(dependencies ? ['metadata:', `  dependencies: "${dependencies}"`] : []),
  ]);

async function reindex(): Promise<void> {
  await indexSource({ db: t.db }, { kind: 'git', locator: repo, owner: 'acme' });
  await refreshDerivedTables(t.db);
}

beforeAll(async () => {
  root = realpathSync(tempDir('caching-api'));
  repo = createRepo(root, 'acme', 'skills', {
    'pdf/SKILL.md': skill('pdf', 'Fills PDF forms.'),
    'notes/SKILL.md': skill('notes', 'Takes notes about PDF forms.', '@acme/pdf'),
    'gone/SKILL.md': skill('gone', 'A PDF helper that will be delisted.'),
    'held/SKILL.md': skill('held', 'A PDF helper that will be quarantined.'),
    'bad/SKILL.md': skill('bad', 'A PDF helper that will be removed.'),
  });
  await reindex();
  // @acme belongs to an organisation (public), whose discovery index is a moving answer too.
  await insertOrganisation(t.db, {
    id: 'org-acme',
    name: 'Acme',
    slug: 'acme-org',
    scopes: { acme: 'public' },
  });
  const versions = await request(t.app).get('/api/packages/@acme/pdf/versions').expect(200);
  pdfVersion = VersionListResponseSchema.parse(versions.body).data[0]?.version ?? '';
  // The transparency log's answers need a checkpoint; it moves only when the sequencer runs again.
  await logPendingVersions(t.db);
  await checkpoint(t.db, newSigner(), 'registry.example/log');
});
afterAll(() => {
  if (root) removeDir(root);
});

const pdf = '/api/packages/@acme/pdf';
/** Every public GET of the registry, with the Cache-Control docs/caching.md gives it. */
const routes = () => [
  { id: 'list', route: 'list', path: '/api/packages', cacheControl: MOVING },
  {
    id: 'list',
    route: 'list, sorted and filtered',
    path: '/api/packages?sort=stars&order=desc&kind=skill',
    cacheControl: MOVING,
  },
  { id: 'list', route: 'feed', path: '/api/packages?limit=50', cacheControl: MOVING },
  { id: 'search', route: 'search', path: '/api/search?q=pdf', cacheControl: MOVING },
  { id: 'detail', route: 'detail', path: pdf, cacheControl: REVALIDATE },
  { id: 'skill-md', route: 'skill-md', path: `${pdf}/skill-md`, cacheControl: MOVING },
  { id: 'dependants', route: 'dependants', path: `${pdf}/dependants`, cacheControl: MOVING },
  { id: 'versions', route: 'versions', path: `${pdf}/versions`, cacheControl: MOVING },
  { id: 'version', route: 'version latest', path: `${pdf}/versions/latest`, cacheControl: MOVING },
  { id: 'version', route: 'version exact', path: `${pdf}/versions/${pdfVersion}`, cacheControl: MOVING },
  {
    id: 'version-file',
    route: 'file latest',
    path: `${pdf}/versions/latest/files/SKILL.md`,
    cacheControl: MOVING,
  },
  {
    id: 'version-file',
    route: 'file exact',
    path: `${pdf}/versions/${pdfVersion}/files/SKILL.md`,
    cacheControl: IMMUTABLE,
  },
  {
    id: 'version-archive',
    route: 'archive latest',
    path: `${pdf}/versions/latest/archive.tgz`,
    cacheControl: MOVING,
  },
  {
    id: 'version-archive',
    route: 'archive exact',
    path: `${pdf}/versions/${pdfVersion}/archive.tgz`,
    cacheControl: IMMUTABLE,
  },
  {
    id: 'version-agent-skill',
    route: 'agent-skill archive latest',
    path: `${pdf}/versions/latest/agent-skill.tar.gz`,
    cacheControl: MOVING,
  },
  {
    id: 'version-agent-skill',
    route: 'agent-skill archive exact',
    path: `${pdf}/versions/${pdfVersion}/agent-skill.tar.gz`,
    cacheControl: IMMUTABLE,
  },
  {
    id: 'version-agent-skill-v2',
    route: 'agent-skill v2 archive latest',
    path: `${pdf}/versions/latest/agent-skill.v2.tar.gz`,
    cacheControl: MOVING,
  },
  {
    id: 'version-agent-skill-v2',
    route: 'agent-skill v2 archive exact',
    path: `${pdf}/versions/${pdfVersion}/agent-skill.v2.tar.gz`,
    cacheControl: IMMUTABLE,
  },
  {
    id: 'agent-skills-index',
    route: 'discovery index',
    path: '/.well-known/agent-skills/index.json',
    cacheControl: MOVING,
  },
  {
    id: 'organization-agent-skills-index',
    route: 'organization discovery index',
    path: '/orgs/acme-org/.well-known/agent-skills/index.json',
    cacheControl: MOVING,
  },
  {
    id: 'scope-agent-skills-index',
    route: 'scope discovery index',
    path: '/@acme/.well-known/agent-skills/index.json',
    cacheControl: MOVING,
  },
  {
    id: 'package-agent-skills-index',
    route: 'package discovery index',
    path: '/@acme/pdf/.well-known/agent-skills/index.json',
    cacheControl: MOVING,
  },
  {
    id: 'version-attestations',
    route: 'version attestations',
    path: `${pdf}/versions/${pdfVersion}/attestations`,
    cacheControl: MOVING,
  },
  { id: 'openapi', route: 'openapi', path: '/api/openapi.json', cacheControl: MOVING },
  { id: 'registry-keys', route: 'registry keys', path: '/api/keys', cacheControl: MOVING },
  { id: 'log-checkpoint', route: 'log checkpoint', path: '/api/log/checkpoint', cacheControl: MOVING },
  {
    id: 'log-inclusion-proof',
    route: 'log inclusion proof',
    path: '/api/log/proof/inclusion?index=0&size=2',
    cacheControl: MOVING,
  },
  {
    id: 'log-consistency-proof',
    route: 'log consistency proof',
    path: '/api/log/proof/consistency?from=1&to=2',
    cacheControl: MOVING,
  },
  { id: 'log-entries', route: 'log entries', path: '/api/log/entries', cacheControl: MOVING },
];

/** What each cache rule of the route table sends (an exact version's bytes are immutable). */
const CACHE_CONTROL_OF: Record<RouteCache, readonly string[]> = {
  'no-store': ['no-store'],
  moving: [MOVING],
  revalidate: [REVALIDATE],
  'moving-unless-moderated': [MOVING],
  'version-bytes': [MOVING, IMMUTABLE],
};

describe('the route table names every cacheable GET and its rule', () => {
  it('each cacheable GET of the table is checked below, with the Cache-Control its rule sends', () => {
    const cacheable = ROUTES.filter((r) => r.method === 'get' && r.cache !== 'no-store');
    // The source redirect has its own test below (a 302 has no validator).
    expect(new Set(routes().map((r) => r.id))).toEqual(
      new Set(cacheable.map((r) => r.id).filter((id) => id !== 'source')),
    );
    for (const { id, route, cacheControl } of routes()) {
      expect({ route, allowed: CACHE_CONTROL_OF[routeOf(id as RouteId).cache] }).toEqual({
        route,
        allowed: expect.arrayContaining([cacheControl]),
      });
    }
    expect(routeOf('source').cache).toBe('moving');
  });
});

const get = (path: string, headers: Record<string, string> = {}) => request(t.app).get(path).set(headers);

describe('every public GET has a validator and a Cache-Control, and answers 304 to it', () => {
  it('ETag and Cache-Control on 200; 304 with the same on a matching If-None-Match, no body', async () => {
    for (const { route, path, cacheControl } of routes()) {
      const first = await get(path);
      expect({ route, status: first.status }).toEqual({ route, status: 200 });
      const etag = first.headers.etag as string;
      expect({ route, etag }).toEqual({ route, etag: expect.stringMatching(/^(W\/)?"[^"]+"$/) });
      expect({ route, cacheControl: first.headers['cache-control'] }).toEqual({ route, cacheControl });
      const again = await get(path, { 'If-None-Match': etag });
      expect({ route, status: again.status, etag: again.headers.etag }).toEqual({ route, status: 304, etag });
      expect(again.headers['cache-control']).toBe(cacheControl);
      expect(again.text ?? '').toBe('');
      // A validator the client does not hold gets the answer.
      await get(path, { 'If-None-Match': '"something-else"' }).expect(200);
    }
  });

  it('the source redirect is a moving answer', async () => {
    const res = await get(`${pdf}/source`).expect(302);
    expect(res.headers['cache-control']).toBe(MOVING);
  });

  it('list and search validators differ by query, never depend on credentials not ours, and vary on them', async () => {
    const page1 = await get('/api/packages?pageSize=2').expect(200);
    const page2 = await get('/api/packages?pageSize=2&page=2').expect(200);
    expect(page2.headers.etag).not.toBe(page1.headers.etag);
    const q1 = await get('/api/search?q=pdf').expect(200);
    const q2 = await get('/api/search?q=notes').expect(200);
    expect(q2.headers.etag).not.toBe(q1.headers.etag);
    for (const { path } of routes()) {
      const plain = await get(path).expect(200);
      const withCredentials = await get(path, { Authorization: 'Bearer abc', Cookie: 'session=1' }).expect(
        200,
      );
      expect(withCredentials.headers.etag).toBe(plain.headers.etag);
      expect(withCredentials.body).toEqual(plain.body);
      // Answers may depend on who asks (private packages): a shared cache keys them by the credentials.
      expect(plain.headers.vary).toMatch(/^Authorization, Cookie\b/);
    }
  });

  it('exact-version bytes carry Last-Modified and answer If-Modified-Since; If-None-Match decides first', async () => {
    const path = `${pdf}/versions/${pdfVersion}/files/SKILL.md`;
    const first = await get(path).expect(200);
    const lastModified = first.headers['last-modified'] as string;
    expect(new Date(lastModified).toUTCString()).toBe(lastModified);
    await get(path, { 'If-Modified-Since': lastModified }).expect(304);
    const hourBefore = new Date(Date.parse(lastModified) - 3_600_000).toUTCString();
    await get(path, { 'If-Modified-Since': hourBefore }).expect(200);
    await get(path, { 'If-Modified-Since': 'not a date' }).expect(200);
    await get(path, { 'If-None-Match': '"other"', 'If-Modified-Since': lastModified }).expect(200);
    // `latest` moves, so it has no date of its own.
    const latest = await get(`${pdf}/versions/latest/files/SKILL.md`).expect(200);
    expect(latest.headers['last-modified']).toBeUndefined();
  });
});

describe('after a change the validators move', () => {
  it('a re-index: every moving answer is new (200), exact-version bytes still 304', async () => {
    const before = new Map<string, string>();
    for (const { path } of routes()) before.set(path, (await get(path).expect(200)).headers.etag as string);
    commitFiles(repo, { 'pdf/SKILL.md': skill('pdf', 'Fills and signs PDF forms.') }, 'pdf: signs too');
    await reindex();
    // What an exact version was does not change, nor does the API's description or its keys; the log
    // moves only when its sequencer runs, an exact version's attestations only when the attester does
    // (neither here).
    const unchanged = [
      'version exact',
      'version attestations',
      'file exact',
      'archive exact',
      'agent-skill archive exact',
      'agent-skill v2 archive exact',
      'openapi',
      'registry keys',
      'log checkpoint',
      'log inclusion proof',
      'log consistency proof',
      'log entries',
    ];
    for (const { route, path } of routes()) {
      const res = await get(path, { 'If-None-Match': before.get(path) as string });
      const status = unchanged.includes(route) ? 304 : 200;
      expect({ route, status: res.status }).toEqual({ route, status });
      if (status === 200) expect(res.headers.etag).not.toBe(before.get(path));
    }
    const search = SearchResponseSchema.parse((await get('/api/search?q=signs').expect(200)).body);
    expect(search.results.map((r) => r.name)).toEqual(['pdf']);
  });

  it('a yank moves the version list and the version, not its bytes', async () => {
    const path = `${pdf}/versions/${pdfVersion}`;
    const list = await get(`${pdf}/versions`).expect(200);
    const version = await get(path).expect(200);
    const bytes = await get(`${path}/archive.tgz`).expect(200);
    // By package too: skills of one commit share their pseudo-version (Go's form names the commit).
    const row = await t.db
      .selectFrom('package_versions as v')
      .innerJoin('packages as p', 'p.id', 'v.package_id')
      .select('v.id')
      .where('v.version', '=', pdfVersion)
      .where('p.name', '=', 'pdf')
      .executeTakeFirstOrThrow();
    await t.db.insertInto('package_version_yanks').values({ version_id: row.id, reason: 'broken' }).execute();
    const after = await get(path, { 'If-None-Match': version.headers.etag as string }).expect(200);
    expect(after.body).toMatchObject({ yanked: true, yankReason: 'broken' });
    await get(`${pdf}/versions`, { 'If-None-Match': list.headers.etag as string }).expect(200);
    await get(`${path}/archive.tgz`, { 'If-None-Match': bytes.headers.etag as string }).expect(304);
    await t.db.deleteFrom('package_version_yanks').where('version_id', '=', row.id).execute();
  });

  it('the list validator follows commits, not transaction order: an older transaction committing later moves it', async () => {
    const other = createDb(t.url, { max: 1 });
    try {
      await other.connection().execute(async (conn) => {
        await sql`begin`.execute(conn);
        // This transaction takes its id now, before the change below commits with a newer one.
        await sql`select pg_current_xact_id()`.execute(conn);
        await t.db.updateTable('packages').set({ repo_stars: 42 }).where('name', '=', 'notes').execute();
        const during = (await get('/api/packages').expect(200)).headers.etag as string;
        await sql`update packages set description = 'Takes notes, late.' where name = 'held'`.execute(conn);
        await sql`commit`.execute(conn);
        const after = await get('/api/packages', { 'If-None-Match': during }).expect(200);
        const held = ListResponseSchema.parse(after.body).data.find((p) => p.name === 'held');
        expect(held?.description).toBe('Takes notes, late.');
      });
    } finally {
      await other.destroy();
    }
  });

  it('transactions of other databases on the cluster do not move it', async () => {
    const url = new URL(t.url);
    url.pathname = '/postgres';
    const other = createDb(url.toString(), { max: 1 });
    try {
      await other.connection().execute(async (conn) => {
        await sql`begin`.execute(conn);
        await sql`select pg_current_xact_id()`.execute(conn);
        await t.db.updateTable('packages').set({ repo_stars: 43 }).where('name', '=', 'notes').execute();
        const during = (await get('/api/packages').expect(200)).headers.etag as string;
        await sql`commit`.execute(conn);
        await get('/api/packages', { 'If-None-Match': during }).expect(304);
      });
    } finally {
      await other.destroy();
    }
  });

  it('with a validator TTL, a change shows once the TTL has passed', async () => {
    const app = createApp({
      db: t.db,
      redis: t.redis,
      logger: silentLogger,
      env: loadEnv({ CATALOG_VALIDATOR_TTL_MS: '200' }),
    });
    const first = await request(app).get('/api/search?q=notes').expect(200);
    await t.db.updateTable('packages').set({ repo_stars: 7 }).where('name', '=', 'notes').execute();
    await sleep(250);
    await request(app)
      .get('/api/search?q=notes')
      .set('If-None-Match', first.headers.etag as string)
      .expect(200);
  });
});

describe('delisting, quarantine and removal reach caches within the documented bound', () => {
  it('delisted by indexing: list, search, detail, skill-md and latest stop at the next revalidation', async () => {
    const held = new Map<string, string>();
    const paths = [
      '/api/packages',
      '/api/search?q=delisted',
      '/api/packages/@acme/gone',
      '/api/packages/@acme/gone/skill-md',
      '/api/packages/@acme/gone/versions/latest',
    ];
    for (const path of paths) {
      const res = await get(path).expect(200);
      // A cache may serve its copy for max-age (the documented bound), then must revalidate.
      expect(res.headers['cache-control']).toMatch(/max-age=[01], must-revalidate$/);
      held.set(path, res.headers.etag as string);
    }
    const versions = VersionListResponseSchema.parse((await get('/api/packages/@acme/gone/versions')).body);
    const exact = `/api/packages/@acme/gone/versions/${versions.data[0]?.version}/archive.tgz`;
    const archive = await get(exact).expect(200);

    commitFiles(repo, { 'gone/SKILL.md': null }, 'gone: removed');
    await reindex();
    const list = await get('/api/packages', { 'If-None-Match': held.get('/api/packages') as string }).expect(
      200,
    );
    expect(ListResponseSchema.parse(list.body).data.map((p) => p.name)).not.toContain('gone');
    const search = await get('/api/search?q=delisted', {
      'If-None-Match': held.get('/api/search?q=delisted') as string,
    }).expect(200);
    expect(SearchResponseSchema.parse(search.body).total).toBe(0);
    for (const path of paths.slice(2)) {
      const res = await get(path, { 'If-None-Match': held.get(path) as string }).expect(404);
      expect(res.headers['cache-control']).toBe('no-store');
      expect(res.headers.etag).toBeUndefined();
    }
    // Exact versions of a delisted package stay fetchable, so lockfiles keep working (docs/versions.md).
    await get(exact, { 'If-None-Match': archive.headers.etag as string }).expect(304);
  });

  it('quarantined: the manifest stays readable for review but no cache keeps it; the bytes are 410; list drops it', async () => {
    const versions = VersionListResponseSchema.parse((await get('/api/packages/@acme/held/versions')).body);
    const exact = `/api/packages/@acme/held/versions/${versions.data[0]?.version}`;
    const latest = '/api/packages/@acme/held/versions/latest';
    const before = await get(`${exact}/files/SKILL.md`).expect(200);
    expect(before.headers['cache-control']).toBe(IMMUTABLE);
    const archive = await get(`${exact}/archive.tgz`).expect(200);
    expect(await quarantinePackage(t.db, { scope: 'acme', name: 'held' }, 'reported')).toBe(true);
    await refreshDerivedTables(t.db);
    for (const path of [exact, latest, '/api/packages/@acme/held/versions']) {
      const res = await get(path).expect(200);
      expect({ path, cacheControl: res.headers['cache-control'] }).toEqual({
        path,
        cacheControl: 'no-store',
      });
    }
    // No client gets the bytes (issue 26); a CDN that kept them from before revalidates after s-maxage
    // and is told they are gone, never 304.
    for (const [path, held] of [
      [`${exact}/files/SKILL.md`, before],
      [`${exact}/archive.tgz`, archive],
      [`${latest}/files/SKILL.md`, before],
      [`${latest}/archive.tgz`, archive],
    ] as const) {
      for (const headers of [
        {} as Record<string, string>,
        { 'If-None-Match': held.headers.etag as string },
        { 'If-Modified-Since': held.headers['last-modified'] as string },
      ]) {
        const res = await get(path, headers).expect(410);
        expect(res.body).toEqual({ error: '@acme/held is quarantined by the registry operator: reported' });
        expect(res.headers['cache-control']).toBe('no-store');
        expect(res.headers.etag).toBeUndefined();
        expect(res.headers['last-modified']).toBeUndefined();
      }
    }
    const list = ListResponseSchema.parse((await get('/api/packages').expect(200)).body);
    expect(list.data.map((p) => p.name)).not.toContain('held');
    const detail = await get('/api/packages/@acme/held').expect(200);
    expect(detail.body.status).toBe('quarantined');
    expect(detail.headers['cache-control']).toBe(REVALIDATE);
    // SKILL.md is those bytes too: not in detail, 410 from skill-md (the fast path, twice: miss and hit).
    expect(detail.body.skillMdRaw).toBe('');
    for (let i = 0; i < 2; i++) {
      const md = await get('/api/packages/@acme/held/skill-md').expect(410);
      expect(md.body).toEqual({ error: '@acme/held is quarantined by the registry operator: reported' });
      expect(md.headers['cache-control']).toBe('no-store');
    }
  });

  it('removed: an immutable archive held by a CDN is 410 at its revalidation (s-maxage), never 304', async () => {
    const versions = VersionListResponseSchema.parse((await get('/api/packages/@acme/bad/versions')).body);
    const exact = `/api/packages/@acme/bad/versions/${versions.data[0]?.version}`;
    const archive = await get(`${exact}/archive.tgz`).expect(200);
    expect(archive.headers['cache-control']).toBe(IMMUTABLE);
    expect(await removePackage(t.db, { scope: 'acme', name: 'bad' }, 'malware')).toBe(true);
    for (const path of [`${exact}/archive.tgz`, `${exact}/files/SKILL.md`, exact]) {
      const res = await get(path, {
        'If-None-Match': archive.headers.etag as string,
        'If-Modified-Since': archive.headers['last-modified'] as string,
      }).expect(410);
      expect(res.headers['cache-control']).toBe('no-store');
      expect(res.headers.etag).toBeUndefined();
      expect(res.headers['last-modified']).toBeUndefined();
    }
  });
});

describe('nothing private and no error is kept by a cache', () => {
  it('track, reports, publish runs, owner actions and health answer no-store', async () => {
    const track = await request(t.app).post(`${pdf}/track`).expect(200);
    expect(track.headers['cache-control']).toBe('no-store');
    const report = await request(t.app).post(`${pdf}/reports`).send({ reason: 'spam' }).expect(201);
    expect(report.headers['cache-control']).toBe('no-store');
    const run = await get(`/api/publish/${randomUUID()}`);
    expect(run.status).toBe(404);
    expect(run.headers['cache-control']).toBe('no-store');
    const owner = await request(t.app).put(`${pdf}/deprecation`).send({ message: 'old' });
    expect(owner.status).toBe(401);
    expect(owner.headers['cache-control']).toBe('no-store');
    for (const path of ['/healthz', '/readyz']) {
      const res = await get(path);
      expect({ path, cacheControl: res.headers['cache-control'] }).toEqual({
        path,
        cacheControl: 'no-store',
      });
    }
  });

  it('errors answer no-store without validators, whatever the route set before failing', async () => {
    for (const path of [
      '/api/nope',
      '/api/packages?page=0',
      `/api/search?q=${'x'.repeat(300)}`,
      '/api/packages/@acme/missing',
      '/api/packages/@acme/missing/skill-md',
      '/api/packages/@acme/missing/dependants',
      '/api/packages/@acme/missing/versions',
      `${pdf}/versions/9.9.9/archive.tgz`,
      `${pdf}/versions/not-semver`,
    ]) {
      const res = await get(path);
      expect(res.status).toBeGreaterThanOrEqual(400);
      expect({ path, cacheControl: res.headers['cache-control'] }).toEqual({
        path,
        cacheControl: 'no-store',
      });
      expect({ path, etag: res.headers.etag }).toEqual({ path, etag: undefined });
    }
  });
});
