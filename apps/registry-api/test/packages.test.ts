import { PackageDetailSchema, PackageListItemSchema } from '@pkgreg/contracts';
import request from 'supertest';
import { beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../src/app.js';
import { loadEnv } from '../src/env.js';
import { insertPackages, packageRow, silentLogger, useTestRegistry } from './fixtures.js';

const t = useTestRegistry({ GITHUB_WEB_URL: 'https://ghe.example.com', DETAIL_CACHE_TTL_MS: '0' });

beforeAll(async () => {
  await insertPackages(t.db, [
    packageRow({ scope: 'acme', name: 'pdf-editor', description: 'Edit PDF files', repo_stars: 5 }),
    packageRow({ scope: 'acme', name: 'root-skill', source_path: '', source_ref: 'dev' }),
    packageRow({ scope: 'acme', name: 'old-skill', status: 'deprecated' }),
    packageRow({ scope: 'acme', name: 'gone-skill', status: 'delisted' }),
  ]);
});

describe('GET /api/packages/@:scope/:name (registry-api.md: package detail)', () => {
  // The spec's detail table lists 35 fields (the issue says 36); the contract schema is the source.
  it('returns every detail field of the spec table, valid against PackageDetailSchema', async () => {
    const res = await request(t.app).get('/api/packages/@acme/pdf-editor').expect(200);
    expect(Object.keys(res.body).sort()).toEqual(Object.keys(PackageDetailSchema.shape).sort());
    // The spec's 35 fields and the additive `warnings` (docs/versions.md), `risk`, `findings` and
    // `quarantineReason` (docs/risk-scan.md), `deprecationMessage` (docs/publishing.md),
    // `dependencies` (docs/versions.md, Dependencies), the three recent-download fields and `private`
    // (docs/accounts.md).
    expect(Object.keys(res.body)).toHaveLength(45);
    expect(res.body.private).toBe(false);
    expect(res.body.warnings).toEqual([]);
    const detail = PackageDetailSchema.parse(res.body);
    expect(detail).toMatchObject({
      scope: 'acme',
      name: 'pdf-editor',
      description: 'Edit PDF files',
      kind: 'skill',
      sourceRepo: 'acme/skills',
      sourcePath: 'skills/pdf-editor',
      sourceRef: 'main',
      repoStars: 5,
      downloadCount: 0,
      status: 'active',
      frontmatter: { name: 'pdf-editor', description: 'Edit PDF files', 'allowed-tools': 'Read Write' },
      allowedTools: ['Read', 'Write'],
      firstIndexedAt: '2026-11-01T10:00:00.000Z',
      lastIndexedAt: '2026-11-20T10:00:00.000Z',
    });
  });

  it('accepts the @ sent as %40 (decisions.md: Registry / Scope and name)', async () => {
    const res = await request(t.app).get('/api/packages/%40acme/pdf-editor').expect(200);
    expect(res.body.name).toBe('pdf-editor');
  });

  it.each([
    ['scope without @', '/api/packages/acme/pdf-editor'],
    ['uppercase', '/api/packages/@Acme/pdf-editor'],
    ['leading dash', '/api/packages/@-acme/pdf-editor'],
    ['trailing dash', '/api/packages/@acme/pdf-editor-'],
    ['double dash', '/api/packages/@acme/pdf--editor'],
    ['underscore', '/api/packages/@acme/pdf_editor'],
    ['65 characters', `/api/packages/@acme/${'a'.repeat(65)}`],
    ['encoded slash in name', '/api/packages/@acme/pdf%2Feditor'],
    ['empty scope', '/api/packages/@/pdf-editor'],
    ['missing name', '/api/packages/@acme'],
    ['bad percent-encoding', '/api/packages/@acme/%E0%A4%A'],
  ])(
    '400 "Invalid package path: expected @scope/name" for %s (registry-api.md: Errors)',
    async (_label, path) => {
      const res = await request(t.app).get(path).expect(400);
      expect(Object.keys(res.body)).toEqual(['error']);
      // A bad percent-encoding fails in Express's decoder, before the path rule: still a 400 {error}.
      if (_label !== 'bad percent-encoding')
        expect(res.body.error).toBe('Invalid package path: expected @scope/name');
    },
  );

  it('404 "Package not found" for a missing package (registry-api.md: Errors)', async () => {
    await request(t.app).get('/api/packages/@acme/nope').expect(404, { error: 'Package not found' });
  });

  it('404 for a delisted package, 200 for a deprecated one (decisions.md: Registry / Status)', async () => {
    await request(t.app).get('/api/packages/@acme/gone-skill').expect(404, { error: 'Package not found' });
    const res = await request(t.app).get('/api/packages/@acme/old-skill').expect(200);
    expect(res.body.status).toBe('deprecated');
  });
});

describe('GET .../skill-md (registry-api.md: raw SKILL.md)', () => {
  it('returns the raw text as text/markdown', async () => {
    const res = await request(t.app).get('/api/packages/@acme/pdf-editor/skill-md').expect(200);
    expect(res.headers['content-type']).toMatch(/^text\/markdown/);
    expect(res.text).toContain('name: pdf-editor');
    expect(res.text.startsWith('---\n')).toBe(true);
  });

  it('shares detail 400/404 and hides delisted (decisions.md: Registry)', async () => {
    await request(t.app)
      .get('/api/packages/acme/pdf-editor/skill-md')
      .expect(400, { error: 'Invalid package path: expected @scope/name' });
    await request(t.app).get('/api/packages/@acme/nope/skill-md').expect(404, { error: 'Package not found' });
    await request(t.app)
      .get('/api/packages/@acme/gone-skill/skill-md')
      .expect(404, { error: 'Package not found' });
    await request(t.app).get('/api/packages/@acme/old-skill/skill-md').expect(200);
  });
});

describe('GET .../source (registry-api.md: source redirect; decisions.md: Registry)', () => {
  it('302 to {codeHost}/{sourceRepo}/tree/{sourceRef}/{sourcePath}', async () => {
    const res = await request(t.app).get('/api/packages/@acme/pdf-editor/source').expect(302);
    expect(res.headers.location).toBe('https://ghe.example.com/acme/skills/tree/main/skills/pdf-editor');
  });

  it('302 to the repository root when sourcePath is empty', async () => {
    const res = await request(t.app).get('/api/packages/@acme/root-skill/source').expect(302);
    expect(res.headers.location).toBe('https://ghe.example.com/acme/skills');
  });

  it('shares detail 400/404 and hides delisted', async () => {
    await request(t.app)
      .get('/api/packages/@acme/Bad/source')
      .expect(400, { error: 'Invalid package path: expected @scope/name' });
    await request(t.app).get('/api/packages/@acme/nope/source').expect(404, { error: 'Package not found' });
    await request(t.app)
      .get('/api/packages/@acme/gone-skill/source')
      .expect(404, { error: 'Package not found' });
  });
});

describe('ETag and Cache-Control (issue: ETag from row_version, 304 on If-None-Match)', () => {
  it('detail: ETag + Cache-Control, 304 on a matching If-None-Match, new ETag after an update', async () => {
    const first = await request(t.app).get('/api/packages/@acme/pdf-editor').expect(200);
    const etag = first.headers.etag as string;
    expect(etag).toMatch(/^"[0-9a-f-]{36}\.\d+\.\d+\.json"$/);
    expect(first.headers['cache-control']).toContain('must-revalidate');
    const notModified = await request(t.app)
      .get('/api/packages/@acme/pdf-editor')
      .set('If-None-Match', etag)
      .expect(304);
    expect(notModified.text).toBe('');
    await request(t.app).get('/api/packages/@acme/pdf-editor').set('If-None-Match', `W/${etag}`).expect(304);
    await request(t.app)
      .get('/api/packages/@acme/pdf-editor')
      .set('If-None-Match', `"other", ${etag}`)
      .expect(304);
    await request(t.app).get('/api/packages/@acme/pdf-editor').set('If-None-Match', '"other"').expect(200);

    // Same body bytes are irrelevant: the trigger bumps row_version on any update, so the ETag moves.
    await t.db.updateTable('packages').set({ repo_stars: 6 }).where('name', '=', 'pdf-editor').execute();
    const after = await request(t.app)
      .get('/api/packages/@acme/pdf-editor')
      .set('If-None-Match', etag)
      .expect(200);
    expect(after.headers.etag).not.toBe(etag);
    expect(after.body.repoStars).toBe(6);
  });

  it('skill-md: its own ETag (not detail one) and 304', async () => {
    const detail = await request(t.app).get('/api/packages/@acme/pdf-editor').expect(200);
    const md = await request(t.app).get('/api/packages/@acme/pdf-editor/skill-md').expect(200);
    expect(md.headers.etag).toMatch(/\.md"$/);
    expect(md.headers.etag).not.toBe(detail.headers.etag);
    expect(md.headers['cache-control']).toMatch(/max-age=\d+/);
    await request(t.app)
      .get('/api/packages/@acme/pdf-editor/skill-md')
      .set('If-None-Match', md.headers.etag as string)
      .expect(304);
  });
});

describe('pre-encoded responses (packages.routes.ts writes cached bytes directly)', () => {
  it('detail and skill-md: exact Content-Length of the UTF-8 body, content types, request id, HEAD without body', async () => {
    const detail = await request(t.app)
      .get('/api/packages/@acme/pdf-editor')
      .set('X-Request-Id', 'req-42')
      .expect(200);
    expect(detail.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(Number(detail.headers['content-length'])).toBe(Buffer.byteLength(detail.text));
    expect(detail.headers['x-request-id']).toBe('req-42');
    const md = await request(t.app).get('/api/packages/@acme/pdf-editor/skill-md').expect(200);
    expect(md.headers['content-type']).toBe('text/markdown; charset=utf-8');
    expect(Number(md.headers['content-length'])).toBe(Buffer.byteLength(md.text));
    const head = await request(t.app).head('/api/packages/@acme/pdf-editor').expect(200);
    expect(head.headers['content-length']).toBe(detail.headers['content-length']);
    expect(head.headers.etag).toBe(detail.headers.etag);
    expect(head.text ?? '').toBe('');
  });
});

describe('detail micro-cache (docs/decisions.md: detail/skill-md cached per process for DETAIL_CACHE_TTL_MS)', () => {
  it('serves a cached detail within the TTL, never caches a 404', async () => {
    const cached = createApp({
      db: t.db,
      redis: t.redis,
      logger: silentLogger,
      env: loadEnv({ DETAIL_CACHE_TTL_MS: '60000' }),
    });
    const first = await request(cached).get('/api/packages/@acme/root-skill').expect(200);
    await t.db.updateTable('packages').set({ repo_stars: 77 }).where('name', '=', 'root-skill').execute();
    const second = await request(cached).get('/api/packages/@acme/root-skill').expect(200);
    expect(second.headers.etag).toBe(first.headers.etag);
    expect(second.body).toEqual(first.body);
    const uncached = await request(t.app).get('/api/packages/@acme/root-skill').expect(200);
    expect(uncached.body.repoStars).toBe(77);

    await request(cached).get('/api/packages/@acme/late-skill').expect(404);
    await t.db
      .insertInto('packages')
      .values(packageRow({ scope: 'acme', name: 'late-skill' }))
      .execute();
    await request(cached).get('/api/packages/@acme/late-skill').expect(200);
  });
});

describe('GET /api/packages (registry-api.md: list; decisions.md: Registry / List)', () => {
  it('defaults page=1, pageSize=20, sort=name asc; items match PackageListItemSchema', async () => {
    const res = await request(t.app).get('/api/packages').expect(200);
    expect(res.body).toMatchObject({ page: 1, pageSize: 20, total: 3 });
    for (const item of res.body.data) PackageListItemSchema.parse(item);
    expect(res.body.data.map((p: { name: string }) => p.name)).toEqual([
      'old-skill',
      'pdf-editor',
      'root-skill',
    ]);
    expect(Object.keys(res.body.data[0]).sort()).toEqual(
      [
        'description',
        'kind',
        'lastIndexedAt',
        'license',
        'name',
        'repoOwner',
        'repoStars',
        'risk',
        'scope',
        'sourceRepo',
        'private',
      ].sort(),
    );
    expect(res.body.data[0].private).toBe(false);
  });

  it('hides delisted packages and counts only visible ones in total (decisions.md: Registry / Status)', async () => {
    const res = await request(t.app).get('/api/packages?pageSize=100').expect(200);
    expect(res.body.data.some((p: { name: string }) => p.name === 'gone-skill')).toBe(false);
    expect(res.body.total).toBe(res.body.data.length);
    expect(res.body.data.some((p: { name: string }) => p.name === 'old-skill')).toBe(true);
  });

  it.each([
    ['page=0', 'page must be an integer, minimum 1'],
    ['page=-1', 'page must be an integer, minimum 1'],
    ['page=1.5', 'page must be an integer, minimum 1'],
    ['page=abc', 'page must be an integer, minimum 1'],
    ['page=1&page=2', 'page must be an integer, minimum 1'],
    ['pageSize=0', 'pageSize must be an integer from 1 to 100'],
    ['pageSize=101', 'pageSize must be an integer from 1 to 100'],
    ['pageSize=x', 'pageSize must be an integer from 1 to 100'],
    ['sort=popular', 'sort must be one of name, stars, indexed, downloads, trending'],
    ['sort=', 'sort must be one of name, stars, indexed, downloads, trending'],
    ['order=up', 'order must be one of asc, desc'],
    ['order=ASC', 'order must be one of asc, desc'],
  ])('400 naming the parameter and its rule for %s', async (query, error) => {
    await request(t.app).get(`/api/packages?${query}`).expect(400, { error });
  });

  it('ignores unknown parameters', async () => {
    // `limit` is the sync feed's since issue 20 (list.test.ts); `per_page` stays unknown.
    const res = await request(t.app).get('/api/packages?foo=bar&per_page=1').expect(200);
    expect(res.body.pageSize).toBe(20);
  });

  it('accepts the rule boundaries page=1, pageSize=1 and pageSize=100', async () => {
    await request(t.app).get('/api/packages?page=1&pageSize=1').expect(200);
    await request(t.app).get('/api/packages?pageSize=100').expect(200);
  });

  it('a page past the end is empty with the right total', async () => {
    const res = await request(t.app).get('/api/packages?page=99').expect(200);
    expect(res.body).toEqual({ data: [], total: 3, page: 99, pageSize: 20 });
  });

  it('so is a page whose positions pass the int4 range the positions are stored in (it was a 500)', async () => {
    for (const [page, pageSize] of [
      [999_999_999, 20],
      [2_147_483_648, 1],
      [21_474_837, 100], // starts inside the range, ends past it
      [1e15, 100],
    ] as const) {
      const res = await request(t.app).get(`/api/packages?page=${page}&pageSize=${pageSize}`).expect(200);
      expect(res.body).toEqual({ data: [], total: 3, page, pageSize });
    }
  });
});

// Runs last: it adds packages, which the list tests above must not see.
describe('field values (registry-api.md: Kind values; Versioning)', () => {
  it.each(['skill', 'composite', 'workflow', 'app'] as const)(
    'kind %s is returned as stored',
    async (kind) => {
      await insertPackages(t.db, [packageRow({ scope: 'kinds', name: `a-${kind}`, kind })]);
      const res = await request(t.app).get(`/api/packages/@kinds/a-${kind}`).expect(200);
      expect(res.body.kind).toBe(kind);
    },
  );

  it('version is a semver string or null; nullable fields come back as null', async () => {
    await insertPackages(t.db, [
      packageRow({
        scope: 'kinds',
        name: 'no-version',
        version: null,
        category: null,
        license: null,
        language: null,
      }),
    ]);
    const res = await request(t.app).get('/api/packages/@kinds/no-version').expect(200);
    expect(res.body).toMatchObject({ version: null, category: null, license: null, language: null });
    const withVersion = await request(t.app).get('/api/packages/@acme/pdf-editor').expect(200);
    expect(withVersion.body.version).toMatch(/^\d+\.\d+\.\d+/);
  });
});
