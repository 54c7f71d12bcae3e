import { createDb } from '@pkgreg/db';
import { pino } from 'pino';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { createApp } from '../src/app.js';
import { loadEnv } from '../src/env.js';
import { useTestRegistry } from './fixtures.js';

const t = useTestRegistry();

describe('errors (registry-api.md: Errors: every error body is {error})', () => {
  it('unknown /api routes are 404 {error}', async () => {
    await request(t.app).get('/api/nope').expect(404, { error: 'Not found' });
    await request(t.app).get('/api/packages/@acme/x/unknown').expect(404, { error: 'Not found' });
    await request(t.app).delete('/api/packages').expect(404, { error: 'Not found' });
  });

  it('a malformed JSON body is a 400 {error}, never a 5xx', async () => {
    const res = await request(t.app)
      .post('/api/packages/@acme/x/track')
      .set('Content-Type', 'application/json')
      .send('{"oops":');
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: 'Malformed JSON body' });
  });

  it('an oversized body is a 413 {error}', async () => {
    const res = await request(t.app)
      .post('/api/packages/@acme/x/track')
      .set('Content-Type', 'application/json')
      .send(JSON.stringify({ pad: 'x'.repeat(40_000) }));
    expect(res.status).toBe(413);
    expect(res.body).toEqual({ error: 'Request body too large' });
  });

  it('a database outage is a 503 {error} with Retry-After, without a stack, logged once for all requests', async () => {
    const lines: string[] = [];
    // Nothing listens on port 1: every query fails as during a PostgreSQL outage.
    const broken = createDb('postgres://postgres@127.0.0.1:1/none', { max: 1 });
    const capturing = pino({ level: 'info' }, { write: (line: string) => lines.push(line) });
    const failing = createApp({ db: broken, redis: t.redis, logger: capturing, env: loadEnv({}) });
    for (const id of ['req-123', 'req-124', 'req-125']) {
      const res = await request(failing).get('/api/packages/@acme/x').set('X-Request-Id', id).expect(503);
      expect(res.body).toEqual({ error: 'Service temporarily unavailable, try again shortly' });
      expect(res.headers['retry-after']).toBe('1');
      expect(res.headers['x-request-id']).toBe(id);
    }
    const logged = lines.map((l) => JSON.parse(l));
    expect(logged.filter((l) => l.msg === 'postgres unavailable')).toEqual([
      expect.objectContaining({ level: 40, dependency: 'postgres', reason: 'ECONNREFUSED' }),
    ]);
    expect(logged.filter((l) => l.level >= 50 || 'err' in l)).toEqual([]);
    await broken.destroy();
  });
});

describe('X-Request-Id (issue: one error middleware logging with a request id)', () => {
  it('echoes a plain incoming id and generates one otherwise', async () => {
    const echoed = await request(t.app).get('/api/nope').set('X-Request-Id', 'abc-123').expect(404);
    expect(echoed.headers['x-request-id']).toBe('abc-123');
    const generated = await request(t.app).get('/api/search').expect(200);
    expect(generated.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    const replaced = await request(t.app)
      .get('/api/search')
      .set('X-Request-Id', 'bad id\twith spaces')
      .expect(200);
    expect(replaced.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });
});

describe('GET /api/openapi.json (issue: OpenAPI 3.1 from the contracts schemas)', () => {
  it('serves an OpenAPI 3.1 document covering every endpoint, schemas from the contracts', async () => {
    const res = await request(t.app).get('/api/openapi.json').expect(200);
    expect(res.body.openapi).toBe('3.1.0');
    expect(Object.keys(res.body.paths).sort()).toEqual(
      [
        '/api/packages',
        '/api/packages/{scope}/{name}',
        '/api/packages/{scope}/{name}/deprecation',
        '/api/packages/{scope}/{name}/reports',
        '/api/packages/{scope}/{name}/skill-md',
        '/api/packages/{scope}/{name}/source',
        '/api/packages/{scope}/{name}/track',
        '/api/packages/{scope}/{name}/versions',
        '/api/packages/{scope}/{name}/versions/{version}',
        '/api/packages/{scope}/{name}/versions/{version}/files/{path}',
        '/api/packages/{scope}/{name}/versions/{version}/archive.tgz',
        '/api/packages/{scope}/{name}/versions/{version}/agent-skill.v2.tar.gz',
        '/api/packages/{scope}/{name}/versions/{version}/agent-skill.tar.gz',
        '/api/packages/{scope}/{name}/versions/{version}/attestations',
        '/api/packages/{scope}/{name}/versions/{version}/yank',
        '/api/packages/{scope}/{name}/dependants',
        '/api/publish',
        '/api/publish/{runId}',
        '/api/hooks/github',
        '/api/search',
        // Registry signatures and the transparency log (docs/provenance.md).
        '/api/keys',
        '/api/log/checkpoint',
        '/api/log/entries',
        '/api/log/proof/consistency',
        '/api/log/proof/inclusion',
        // Accounts (docs/accounts.md), the CLI's sign-in (docs/cli-auth.md), uploads (docs/publishing.md),
        // MCP clients' consent and connected apps (docs/accounts.md).
        '/api/admin/orgs/{slug}/take-over',
        '/api/auth-options',
        '/api/cli/authorize',
        '/api/cli/token',
        '/api/connected-apps',
        '/api/connected-apps/{clientId}',
        '/api/mcp/consent/{id}',
        '/api/me',
        '/api/orgs/{slug}/audit',
        '/api/orgs/{slug}/github',
        '/api/packages/{scope}/{name}/settings',
        '/api/packages/{scope}/{name}/trusted-publishers',
        '/api/packages/{scope}/{name}/trusted-publishers/{id}',
        '/api/scopes/{scope}/settings',
        '/api/sessions',
        '/api/sessions/{id}',
        '/api/tokens',
        '/api/tokens/current',
        '/api/tokens/{id}',
        // The Agent Skills discovery indexes (docs/discovery.md): outside /api, at the RFC's well-known path.
        '/.well-known/agent-skills/index.json',
        '/orgs/{slug}/.well-known/agent-skills/index.json',
        '/{scope}/.well-known/agent-skills/index.json',
        '/{scope}/{name}/.well-known/agent-skills/index.json',
      ].sort(),
    );
    const detail = res.body.components.schemas.PackageDetail;
    // The spec's 35 fields and the additive `warnings` (docs/versions.md), `risk`, `findings` and
    // `quarantineReason` (docs/risk-scan.md), `deprecationMessage` (docs/publishing.md),
    // `dependencies` (docs/versions.md, Dependencies), the three recent-download fields and `private`
    // (docs/accounts.md).
    expect(Object.keys(detail.properties)).toHaveLength(45);
    expect(detail.properties.warnings).toMatchObject({ type: 'array' });
    const version = res.body.components.schemas.VersionDetail;
    expect(version.properties.files.items.required).toEqual(
      expect.arrayContaining(['path', 'size', 'sha256', 'gitBlobSha', 'executable']),
    );
    expect(
      res.body.paths['/api/packages/{scope}/{name}/versions/{version}/archive.tgz'].get.responses['410'],
    ).toBeDefined();
    expect(detail.properties.status.enum).toEqual(['active', 'deprecated', 'delisted', 'quarantined']);
    const listParams = res.body.paths['/api/packages'].get.parameters.map((p: { name: string }) => p.name);
    expect(listParams).toEqual([
      'page',
      'pageSize',
      'sort',
      'order',
      'kind',
      'category',
      'tag',
      'agent',
      'license',
      'verified',
      'status',
      'risk',
      'owner',
      'cursor',
      'limit',
      'updatedSince',
    ]);
    const searchParams = res.body.paths['/api/search'].get.parameters.map((p: { name: string }) => p.name);
    expect(searchParams).toEqual(['q', ...listParams.slice(4, 13)]);
    expect(res.body.components.schemas.FeedResponse.required).toEqual(['data', 'nextCursor', 'limit']);
    const sort = res.body.paths['/api/packages'].get.parameters.find(
      (p: { name: string }) => p.name === 'sort',
    );
    expect(sort.schema.enum).toEqual(['name', 'stars', 'indexed', 'downloads', 'trending']);
    expect(res.body.paths['/api/packages/{scope}/{name}/track'].post.responses['404']).toBeDefined();
  });
});
