import express from 'express';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { openApiPath, openApiPaths, type RouteSpec, registerRoutes } from '../src/index.js';
import { routeTemplateOf } from '../src/metrics.js';

// The route table's helpers: Express routes registered from it (named by their templates, JSON parsed
// only where a route takes it), and OpenAPI paths generated from it.

const toJsonSchema = (schema: z.ZodType, io: 'input' | 'output' = 'output') =>
  z.toJSONSchema(schema, { target: 'draft-2020-12', io }) as Record<string, unknown>;

const ItemSchema = z.object({ id: z.string() });
const ROUTES = [
  {
    id: 'item',
    method: 'get',
    path: '/items/:id/files/*rest',
    cache: 'moving',
    access: 'anonymous',
    summary: 'An item',
    params: z.object({ id: z.string().describe('The id'), rest: z.string() }),
    query: [z.object({ page: z.coerce.number().default(1) })],
    queryDocs: { page: { description: 'Which page' } },
    responses: { 200: { description: 'The item', json: { name: 'Item', schema: ItemSchema } } },
  },
  {
    id: 'create',
    method: 'post',
    path: '/items',
    cache: 'no-store',
    access: 'scope',
    summary: 'Create one',
    body: { parser: 'json', required: true, json: { name: 'Item', schema: ItemSchema, io: 'input' } },
    responses: { 201: { description: 'Created', json: { name: 'Item', schema: ItemSchema } } },
  },
  {
    id: 'hidden',
    method: 'get',
    path: '/hidden',
    cache: 'no-store',
    access: 'anonymous',
    undocumented: true,
    summary: 'Not an operation',
    responses: {},
  },
] as const satisfies readonly RouteSpec[];

describe('openApiPath', () => {
  it('writes Express parameters and rest parameters as OpenAPI templates', () => {
    expect(openApiPath('/a/:b/c/*d')).toBe('/a/{b}/c/{d}');
    expect(openApiPath('/plain.json')).toBe('/plain.json');
  });
});

describe('openApiPaths', () => {
  const { paths, schemas } = openApiPaths(ROUTES, {
    toJsonSchema,
    securityOf: (route) => (route.access === 'anonymous' ? undefined : [{ token: [] }]),
  });

  it('documents every route but the undocumented, parameters from their schemas', () => {
    expect(Object.keys(paths)).toEqual(['/items/{id}/files/{rest}', '/items']);
    expect(paths['/items/{id}/files/{rest}']?.get?.parameters).toEqual([
      { name: 'id', in: 'path', required: true, description: 'The id', schema: { type: 'string' } },
      { name: 'rest', in: 'path', required: true, schema: { type: 'string' } },
      {
        name: 'page',
        in: 'query',
        required: false,
        description: 'Which page',
        schema: { default: 1, type: 'number' },
      },
    ]);
  });

  it('refers to named schemas once, in components, and takes security from access', () => {
    expect(Object.keys(schemas)).toEqual(['Item']);
    expect(schemas.Item).not.toHaveProperty('$schema');
    expect(paths['/items']?.post).toMatchObject({
      security: [{ token: [] }],
      requestBody: {
        required: true,
        content: { 'application/json': { schema: { $ref: '#/components/schemas/Item' } } },
      },
      responses: { 201: { description: 'Created' } },
    });
    expect(paths['/items/{id}/files/{rest}']?.get).not.toHaveProperty('security');
  });
});

describe('registerRoutes', () => {
  const app = express();
  const seen: (string | undefined)[] = [];
  registerRoutes(
    app,
    ROUTES,
    {
      item: (req, res) => {
        seen.push(routeTemplateOf(req));
        res.json({ id: req.params.id, body: req.body ?? null });
      },
      create: (req, res) => {
        seen.push(routeTemplateOf(req));
        res.status(201).json(req.body);
      },
      hidden: (_req, res) => {
        res.status(204).end();
      },
    },
    { jsonParser: [express.json()] },
  );

  it('serves each route by its template and names the request by it; JSON parsed only where taken', async () => {
    await request(app).get('/items/7/files/a/b').send({ x: 1 }).expect(200, { id: '7', body: null });
    await request(app).post('/items').send({ id: 'x' }).expect(201, { id: 'x' });
    await request(app).get('/hidden').expect(204);
    expect(seen).toEqual(['/items/:id/files/*rest', '/items']);
  });
});
