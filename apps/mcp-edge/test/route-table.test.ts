import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { EDGE_CACHE_CONTROL, EDGE_ROUTES } from '../src/routes/route-table.js';
import { useHarness } from './helpers.js';

// The edge's route table (src/routes/route-table.ts) is the one list of its HTTP routes: these tests
// walk it, so a route added there is checked here without a list of paths of its own.

const h = useHarness();

describe('the edge route table', () => {
  it('ids and method + path pairs are unique', () => {
    expect(new Set(EDGE_ROUTES.map((r) => r.id)).size).toBe(EDGE_ROUTES.length);
    expect(new Set(EDGE_ROUTES.map((r) => `${r.method} ${r.path}`)).size).toBe(EDGE_ROUTES.length);
  });

  it('every GET route is served (never the unknown-path 404) with the Cache-Control of its rule', async () => {
    for (const route of EDGE_ROUTES.filter((r) => r.method === 'get')) {
      const res = await request(h.app).get(route.path);
      expect({ route: route.id, unknown: res.body?.error === 'not_found' }).toEqual({
        route: route.id,
        unknown: false,
      });
      expect({ route: route.id, cacheControl: res.headers['cache-control'] }).toEqual({
        route: route.id,
        cacheControl: EDGE_CACHE_CONTROL[route.cache],
      });
    }
  });

  it('the token endpoint refuses an empty form without being cached', async () => {
    const res = await request(h.app).post('/mcp/token').type('form').send({});
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(res.status).toBeLessThan(500);
    expect(res.headers['cache-control']).toBe(EDGE_CACHE_CONTROL['no-store']);
  });

  it('a path outside the table is the unknown-path 404', async () => {
    const res = await request(h.app).get('/mcp/nothing-here').expect(404);
    expect(res.body).toEqual({ error: 'not_found', error_description: 'no such endpoint' });
  });
});
