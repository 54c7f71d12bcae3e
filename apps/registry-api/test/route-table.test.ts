import { openApiPath } from '@pkgreg/server-kit';
import request from 'supertest';
import { beforeAll, describe, expect, it } from 'vitest';
import { WEBHOOK_PATH } from '../src/publishing/publishing.service.js';
import { type RegistryRoute, ROUTES, routeOf } from '../src/routes/route-table.js';
import { insertPackages, packageRow, useTestRegistry } from './fixtures.js';

// The route table (src/routes/route-table.ts) is the one list of the registry's routes: these tests
// walk it, so a route added there is checked here without a list of paths of its own.

const t = useTestRegistry();

beforeAll(async () => {
  await insertPackages(t.db, [packageRow({ scope: 'acme', name: 'pdf' })]);
});

const VALUES: Record<string, string> = {
  scope: '@acme',
  name: 'pdf',
  version: '1.0.0',
  path: 'SKILL.md',
  runId: '00000000-0000-4000-8000-000000000000',
};

/** A request path for `route`, each parameter filled with a plausible value. */
const concrete = (route: RegistryRoute) =>
  route.path.replace(/[:*]([A-Za-z]+)/g, (_m, name: string) => VALUES[name] ?? name);

const send = (method: string, path: string) =>
  (request(t.app) as unknown as Record<string, (path: string) => request.Test>)[method]?.(
    path,
  ) as request.Test;

describe('the route table', () => {
  it('ids and method + path pairs are unique', () => {
    expect(new Set(ROUTES.map((r) => r.id)).size).toBe(ROUTES.length);
    expect(new Set(ROUTES.map((r) => `${r.method} ${r.path}`)).size).toBe(ROUTES.length);
  });

  it('the served OpenAPI document has every documented route, and nothing else', async () => {
    const doc = (await request(t.app).get('/api/openapi.json').expect(200)).body as {
      paths: Record<string, Record<string, { parameters?: { name: string; in: string }[] }>>;
    };
    const documented = ROUTES.filter((r) => !('undocumented' in r && r.undocumented));
    const inTable = documented.map((r) => `${r.method} ${openApiPath(r.path)}`).sort();
    const inDocument = Object.entries(doc.paths)
      .flatMap(([path, methods]) => Object.keys(methods).map((method) => `${method} ${path}`))
      .sort();
    expect(inDocument).toEqual(inTable);
    // Each path parameter of a template is declared, and no other.
    for (const route of documented) {
      const names = [...route.path.matchAll(/[:*]([A-Za-z]+)/g)].map((m) => m[1]);
      const operation = doc.paths[openApiPath(route.path)]?.[route.method];
      const declared = (operation?.parameters ?? []).filter((p) => p.in === 'path').map((p) => p.name);
      expect({ route: route.id, declared }).toEqual({ route: route.id, declared: names });
    }
  });

  it('the webhook route is the path publishing hands out', () => {
    expect(routeOf('github-webhook').path).toBe(WEBHOOK_PATH);
  });

  it('every route that is not anonymous refuses a request without a proof (401 with a Bearer challenge)', async () => {
    const protectedRoutes = ROUTES.filter((r) => r.access !== 'anonymous');
    expect(protectedRoutes.length).toBeGreaterThan(0);
    for (const route of protectedRoutes) {
      const res = await send(route.method, concrete(route))
        .set('Content-Type', 'application/json')
        .send('{}');
      expect({ route: route.id, status: res.status }).toEqual({ route: route.id, status: 401 });
      expect(res.headers['www-authenticate']).toMatch(/^Bearer /);
    }
  });

  it('no anonymous route asks for a proof', async () => {
    for (const route of ROUTES.filter((r) => r.access === 'anonymous')) {
      const res = await send(route.method, concrete(route));
      expect({ route: route.id, status: res.status }).not.toEqual({ route: route.id, status: 401 });
    }
  });

  it('a method a path does not declare is an unknown route: 404 {error}', async () => {
    for (const route of ROUTES) {
      const res = await request(t.app).patch(concrete(route));
      expect({ route: route.id, status: res.status, body: res.body }).toEqual({
        route: route.id,
        status: 404,
        body: { error: 'Not found' },
      });
    }
  });

  it('no-store routes are never kept by a cache, on success or refusal', async () => {
    for (const route of ROUTES.filter((r) => r.cache === 'no-store' && r.method === 'get')) {
      const res = await send(route.method, concrete(route));
      expect({ route: route.id, cacheControl: res.headers['cache-control'] }).toEqual({
        route: route.id,
        cacheControl: 'no-store',
      });
    }
  });
});
