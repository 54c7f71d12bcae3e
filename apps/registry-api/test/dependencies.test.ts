import type { RequestListener } from 'node:http';
import {
  DependantsResponseSchema,
  type PackageDetail,
  PackageDetailSchema,
  VersionDetailSchema,
  VersionListResponseSchema,
} from '@pkgreg/contracts';
import { TEST_REDIS_URL, testKeyPrefix } from '@pkgreg/db/testing';
import { useTestDatabase } from '@pkgreg/db/vitest';
import { indexSource } from '@pkgreg/indexer';
import { skillMd } from '@pkgreg/indexer/testing';
import { removePackage, withDependencyRefresh } from '@pkgreg/registry';
import { FakeGitHub, type FakeRepo } from '@pkgreg/testing';
import { Redis } from 'ioredis';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../src/app.js';
import { loadEnv } from '../src/env.js';
import { quarantinePackage, releasePackage } from '../src/moderation/moderation.repository.js';
import { silentLogger } from './fixtures.js';

// docs/versions.md, Dependencies: detail's `dependencies` (with whether each resolves), each version's,
// and GET …/dependants, over skills indexed by the real indexer from a local server speaking GitHub's
// REST API (@pkgreg/testing), on a real Postgres. Yanks go through the API with a user token.

const database = useTestDatabase();
let gh: FakeGitHub;
let redis: Redis;
let app: RequestListener;

const skill = (name: string, extra: string[] = [], dependencies?: string) =>
  skillMd([
    `name: ${name}`,
    `description: The ${name} skill.`,
    ...extra,
    ...(dependencies === undefined ? [] : ['metadata:', `  dependencies: "${dependencies}"`]),
  ]);

const repo = (owner: string, name: string, files: Record<string, string>): FakeRepo => ({
  owner,
  name,
  defaultBranch: 'main',
  stars: 1,
  license: 'MIT',
  homepage: null,
  files,
});

const crawl = (locator: string) =>
  indexSource(
    { db: database.db, github: { apiUrl: gh.apiUrl, webUrl: 'https://github.example' } },
    { kind: 'github', locator },
  );

async function detail(name: string): Promise<{ body: PackageDetail; etag: string }> {
  const res = await request(app).get(`/api/packages/${name}`).expect(200);
  return { body: PackageDetailSchema.parse(res.body), etag: String(res.headers.etag) };
}

const dependants = (name: string, query = '') => request(app).get(`/api/packages/${name}/dependants${query}`);

beforeAll(async () => {
  gh = new FakeGitHub('', 'https://github.example');
  await gh.start();
  gh.addRepo(repo('octo', 'skills', { 'pdf/SKILL.md': skill('pdf', ['version: 1.0.0']) }));
  gh.addRepo(
    repo('acme', 'tools', {
      'report/SKILL.md': skill('report', [], '@octo/pdf@^1, @late/csv@^2, @octo/pdf-missing, Not A Name'),
      'viewer/SKILL.md': skill('viewer', [], '@octo/pdf'),
      'charts/SKILL.md': skill('charts', [], '@octo/pdf@>=1.0.0'),
      'solo/SKILL.md': skill('solo'),
    }),
  );
  gh.addRepo(repo('late', 'data', { 'csv/SKILL.md': skill('csv', ['version: 2.1.0']) }));
  gh.addUser('ghu_octo', 'octo');
  gh.addUser('ghu_acme', 'acme');
  redis = new Redis(TEST_REDIS_URL, { lazyConnect: true, keyPrefix: `${testKeyPrefix('dependencies')}:` });
  const env = loadEnv({
    GITHUB_API_URL: gh.apiUrl,
    GITHUB_WEB_URL: 'https://github.example',
    DETAIL_CACHE_TTL_MS: '0',
  });
  app = createApp({ db: database.db, redis, logger: silentLogger, env });
  await crawl('octo/skills');
  await crawl('acme/tools');
}, 60_000);

afterAll(async () => {
  redis?.disconnect();
  await gh?.stop();
});

describe('detail: dependencies of the latest version, with whether each resolves', () => {
  it('lists them in declared order with their range; depCount is their number', async () => {
    const { body } = await detail('@acme/report');
    expect(body.dependencies).toEqual([
      { name: '@octo/pdf', range: '^1', resolves: true },
      { name: '@late/csv', range: '^2', resolves: false },
      { name: '@octo/pdf-missing', range: null, resolves: false },
    ]);
    expect(body.depCount).toBe(3);
    expect(body.warnings).toEqual([
      'dependency "Not A Name" is not @scope/name[@range] (lowercase a-z 0-9 -); it was ignored',
      'dependency @late/csv is not in the registry; it resolves once that package is indexed',
      'dependency @octo/pdf-missing is not in the registry; it resolves once that package is indexed',
    ]);
    expect((await detail('@acme/solo')).body).toMatchObject({ dependencies: [], depCount: 0 });
    expect((await detail('@octo/pdf')).body).toMatchObject({ dependencies: [], dependantCount: 3 });
  });

  it('each version lists what it declared (name and range; no resolves: an exact version is immutable)', async () => {
    const res = await request(app).get('/api/packages/@acme/report/versions/latest').expect(200);
    const version = VersionDetailSchema.parse(res.body);
    expect(res.body.dependencies).toEqual([
      { name: '@octo/pdf', range: '^1' },
      { name: '@late/csv', range: '^2' },
      { name: '@octo/pdf-missing', range: null },
    ]);
    expect(version.dependencies).toHaveLength(3);
    const pdf = await request(app).get('/api/packages/@octo/pdf/versions/1.0.0').expect(200);
    expect(pdf.body.dependencies).toEqual([]);
  });

  it('a package indexed later resolves at once: the dependant’s ETag moves, its count is true', async () => {
    const before = await detail('@acme/report');
    await crawl('late/data');
    const after = await detail('@acme/report');
    expect(after.etag).not.toBe(before.etag);
    expect(after.body.dependencies.map((d) => d.resolves)).toEqual([true, true, false]);
    // A client revalidating with the old ETag gets the new body, not a 304.
    await request(app).get('/api/packages/@acme/report').set('If-None-Match', before.etag).expect(200);
    expect((await detail('@late/csv')).body.dependantCount).toBe(1);
  });

  it('a range no version satisfies does not resolve; a new version that does makes it resolve', async () => {
    const tools = gh.repos.get('acme/tools') as FakeRepo;
    tools.files['charts/SKILL.md'] = skill('charts', [], '@octo/pdf@^2');
    await crawl('acme/tools');
    expect((await detail('@acme/charts')).body.dependencies).toEqual([
      { name: '@octo/pdf', range: '^2', resolves: false },
    ]);
    const skills = gh.repos.get('octo/skills') as FakeRepo;
    skills.files['pdf/SKILL.md'] = skill('pdf', ['version: 2.0.0']);
    await crawl('octo/skills');
    expect((await detail('@acme/charts')).body.dependencies[0]?.resolves).toBe(true);
    // report asks for ^1: 1.0.0 still satisfies it.
    expect((await detail('@acme/report')).body.dependencies[0]).toEqual({
      name: '@octo/pdf',
      range: '^1',
      resolves: true,
    });
  });
});

describe('yanks move the latest version, and with it what resolves and what counts', () => {
  it('yanking the only version a range allows makes it unresolved; unyank undoes', async () => {
    const before = await detail('@acme/report');
    await request(app)
      .put('/api/packages/@octo/pdf/versions/1.0.0/yank')
      .set('Authorization', 'Bearer ghu_octo')
      .send({ reason: 'broken' })
      .expect(200);
    const after = await detail('@acme/report');
    expect(after.etag).not.toBe(before.etag);
    expect(after.body.dependencies[0]).toEqual({ name: '@octo/pdf', range: '^1', resolves: false });
    // viewer asks for the latest: 2.0.0 is still there.
    expect((await detail('@acme/viewer')).body.dependencies[0]?.resolves).toBe(true);
    await request(app)
      .delete('/api/packages/@octo/pdf/versions/1.0.0/yank')
      .set('Authorization', 'Bearer ghu_octo')
      .expect(200);
    expect((await detail('@acme/report')).body.dependencies[0]?.resolves).toBe(true);
  });

  it('yanking a dependant’s latest version counts its previous version’s dependencies instead', async () => {
    // charts: 1st version needs @octo/pdf@>=1.0.0, 2nd (latest) @octo/pdf@^2; add a 3rd with none.
    const tools = gh.repos.get('acme/tools') as FakeRepo;
    tools.files['charts/SKILL.md'] = skill('charts', ['version: 3.0.0']);
    await crawl('acme/tools');
    expect((await detail('@acme/charts')).body).toMatchObject({ depCount: 0, dependencies: [] });
    expect((await detail('@octo/pdf')).body.dependantCount).toBe(2);
    await request(app)
      .put('/api/packages/@acme/charts/versions/3.0.0/yank')
      .set('Authorization', 'Bearer ghu_acme')
      .send({})
      .expect(200);
    expect((await detail('@acme/charts')).body).toMatchObject({
      depCount: 1,
      dependencies: [{ name: '@octo/pdf', range: '^2', resolves: true }],
    });
    expect((await detail('@octo/pdf')).body.dependantCount).toBe(3);
  });
});

describe('GET /api/packages/@scope/name/dependants', () => {
  it('pages the packages whose latest version depends on it, by scope then name, as the list', async () => {
    const first = await dependants('@octo/pdf', '?pageSize=2').expect(200);
    const page1 = DependantsResponseSchema.parse(first.body);
    expect(page1).toMatchObject({ total: 3, page: 1, pageSize: 2 });
    expect(page1.data.map((p) => `@${p.scope}/${p.name}`)).toEqual(['@acme/charts', '@acme/report']);
    expect(page1.data[0]).toMatchObject({ kind: 'skill', sourceRepo: 'acme/tools', license: 'MIT' });
    const page2 = DependantsResponseSchema.parse(
      (await dependants('@octo/pdf', '?page=2&pageSize=2').expect(200)).body,
    );
    expect(page2.data.map((p) => `@${p.scope}/${p.name}`)).toEqual(['@acme/viewer']);
    expect((await dependants('@octo/pdf', '?page=3&pageSize=2').expect(200)).body).toEqual({
      data: [],
      total: 3,
      page: 3,
      pageSize: 2,
    });
    expect((await dependants('@acme/solo').expect(200)).body).toEqual({
      data: [],
      total: 0,
      page: 1,
      pageSize: 20,
    });
  });

  it('a quarantined dependant leaves the page and the count; released, it is back', async () => {
    expect(await quarantinePackage(database.db, { scope: 'acme', name: 'viewer' }, 'reported')).toBe(true);
    expect((await dependants('@octo/pdf').expect(200)).body.total).toBe(2);
    expect((await detail('@octo/pdf')).body.dependantCount).toBe(2);
    expect(await releasePackage(database.db, { scope: 'acme', name: 'viewer' })).toBe(true);
    expect((await dependants('@octo/pdf').expect(200)).body.total).toBe(3);
    expect((await detail('@octo/pdf')).body.dependantCount).toBe(3);
  });

  it('errors: the contract’s {error}, 404 for an unknown or delisted package, 400 for a bad path or page', async () => {
    await dependants('@octo/nothing').expect(404, { error: 'Package not found' });
    await request(app)
      .get('/api/packages/octo/pdf/dependants')
      .expect(400, { error: 'Invalid package path: expected @scope/name' });
    await request(app)
      .get('/api/packages/@Octo/pdf/dependants')
      .expect(400, { error: 'Invalid package path: expected @scope/name' });
    await dependants('@octo/pdf', '?page=0').expect(400, { error: 'page must be an integer, minimum 1' });
    await dependants('@octo/pdf', '?pageSize=101').expect(400, {
      error: 'pageSize must be an integer from 1 to 100',
    });
    await dependants('@octo/pdf', '?page=x').expect(400, { error: 'page must be an integer, minimum 1' });
  });

  it('an operator removal of a dependency: 404 here, its dependants no longer resolve it', async () => {
    const before = await detail('@acme/viewer');
    const removed = await withDependencyRefresh(database.db, { scope: 'late', name: 'csv' }, (trx) =>
      removePackage(trx, { scope: 'late', name: 'csv' }, 'malware'),
    );
    expect(removed).toBe(true);
    await dependants('@late/csv').expect(404, { error: 'Package not found' });
    expect((await detail('@acme/report')).body.dependencies[1]).toEqual({
      name: '@late/csv',
      range: '^2',
      resolves: false,
    });
    // Dependants of other packages are left alone.
    expect((await detail('@acme/viewer')).etag).toBe(before.etag);
  });
});

describe('OpenAPI', () => {
  it('documents the dependants page and the dependencies of detail and versions', async () => {
    const doc = (await request(app).get('/api/openapi.json').expect(200)).body;
    const path = doc.paths['/api/packages/{scope}/{name}/dependants'];
    expect(Object.keys(path.get.responses).sort()).toEqual(['200', '304', '400', '404']);
    expect(path.get.parameters.map((p: { name: string }) => p.name)).toEqual([
      'scope',
      'name',
      'page',
      'pageSize',
    ]);
    expect(doc.components.schemas.PackageDetail.properties.dependencies.items.required).toEqual([
      'name',
      'range',
      'resolves',
    ]);
    expect(doc.components.schemas.VersionDetail.properties.dependencies).toBeDefined();
    expect(doc.components.schemas.DependantsResponse).toBeDefined();
  });
});

describe('versions list is unchanged by dependencies', () => {
  it('still answers the list shape', async () => {
    const res = await request(app).get('/api/packages/@acme/report/versions').expect(200);
    expect(VersionListResponseSchema.parse(res.body).total).toBe(1);
  });
});
