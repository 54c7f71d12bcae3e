import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { useHarness } from './helpers.js';

// Discovery before connecting (src/routes/server-card.ts): the Server Card (SEP-2127) and the AI Catalog
// naming it, as modelcontextprotocol/experimental-ext-server-card's docs/discovery.md has them: the
// card's schema, the catalog's place, type and entries, CORS for browser clients, ETag revalidation.

/**
 * The extension's schema.json (modelcontextprotocol/experimental-ext-server-card at 8924e08, last changed
 * in 92999cb), its descriptions left out.
 */
const SERVER_CARD_SCHEMA: z.core.JSONSchema.JSONSchema = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  $defs: {
    Icon: {
      properties: {
        mimeType: { type: 'string' },
        sizes: { items: { type: 'string' }, type: 'array' },
        src: { format: 'uri', type: 'string' },
        theme: { enum: ['dark', 'light'], type: 'string' },
      },
      required: ['src'],
      type: 'object',
    },
    Input: {
      properties: {
        choices: { items: { type: 'string' }, type: 'array' },
        default: { type: 'string' },
        description: { type: 'string' },
        format: { enum: ['boolean', 'filepath', 'number', 'string'], type: 'string' },
        isRequired: { type: 'boolean' },
        isSecret: { type: 'boolean' },
        placeholder: { type: 'string' },
        value: { type: 'string' },
      },
      type: 'object',
    },
    KeyValueInput: {
      properties: {
        choices: { items: { type: 'string' }, type: 'array' },
        default: { type: 'string' },
        description: { type: 'string' },
        format: { enum: ['boolean', 'filepath', 'number', 'string'], type: 'string' },
        isRequired: { type: 'boolean' },
        isSecret: { type: 'boolean' },
        name: { type: 'string' },
        placeholder: { type: 'string' },
        value: { type: 'string' },
        variables: { additionalProperties: { $ref: '#/$defs/Input' }, type: 'object' },
      },
      required: ['name'],
      type: 'object',
    },
    MetaObject: { additionalProperties: {}, type: 'object' },
    Remote: {
      properties: {
        headers: { items: { $ref: '#/$defs/KeyValueInput' }, type: 'array' },
        supportedProtocolVersions: { items: { type: 'string' }, type: 'array' },
        type: { enum: ['sse', 'streamable-http'], type: 'string' },
        url: { pattern: '^(https?://[^\\s]+|\\{[a-zA-Z_][a-zA-Z0-9_]*\\}[^\\s]*)$', type: 'string' },
        variables: { additionalProperties: { $ref: '#/$defs/Input' }, type: 'object' },
      },
      required: ['type', 'url'],
      type: 'object',
    },
    Repository: {
      properties: {
        id: { type: 'string' },
        source: { type: 'string' },
        subfolder: { type: 'string' },
        url: { format: 'uri', type: 'string' },
      },
      required: ['source', 'url'],
      type: 'object',
    },
    ServerCard: {
      properties: {
        $schema: {
          format: 'uri',
          pattern: '^https://static\\.modelcontextprotocol\\.io/schemas/v1/server-card\\.schema\\.json$',
          type: 'string',
        },
        _meta: { $ref: '#/$defs/MetaObject' },
        description: { maxLength: 100, minLength: 1, type: 'string' },
        icons: { items: { $ref: '#/$defs/Icon' }, type: 'array' },
        name: { maxLength: 200, minLength: 3, pattern: '^[a-zA-Z0-9.-]+/[a-zA-Z0-9._-]+$', type: 'string' },
        remotes: { items: { $ref: '#/$defs/Remote' }, type: 'array' },
        repository: { $ref: '#/$defs/Repository' },
        title: { maxLength: 100, minLength: 1, type: 'string' },
        version: { maxLength: 255, type: 'string' },
        websiteUrl: { format: 'uri', type: 'string' },
      },
      required: ['$schema', 'description', 'name', 'version'],
      type: 'object',
    },
  },
};
const ServerCardSchema = z.fromJSONSchema({ ...SERVER_CARD_SCHEMA, $ref: '#/$defs/ServerCard' });

const ORIGIN = 'https://mcp.example.com';
const h = useHarness({ PKGREG_PUBLIC_BASE_URL: ORIGIN });

const CORS = {
  'access-control-allow-origin': '*',
  'access-control-allow-methods': 'GET',
  'access-control-allow-headers': 'Content-Type, If-None-Match',
  'access-control-expose-headers': 'ETag',
};
const DOCUMENTS = ['/mcp/server-card', '/.well-known/mcp/server-card.json', '/.well-known/ai-catalog.json'];

describe('the server card', () => {
  it("describes the endpoint and both revisions, valid by the extension's schema, at both places", async () => {
    const res = await request(h.app)
      .get('/mcp/server-card')
      .set('Accept', 'application/mcp-server-card+json');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/mcp-server-card\+json/);
    const card = JSON.parse(res.text);
    expect(card).toEqual({
      $schema: 'https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json',
      name: 'com.example.mcp/pkgreg-mcp-edge',
      version: expect.any(String),
      title: 'pkgreg',
      description: expect.any(String),
      remotes: [
        {
          type: 'streamable-http',
          url: `${ORIGIN}/mcp`,
          supportedProtocolVersions: ['2026-07-28', '2025-11-25'],
        },
      ],
    });
    expect(ServerCardSchema.safeParse(card).error).toBeUndefined();
    // The schema holds `$schema` to v1: the v2 URL the card named before is refused.
    const v2 = 'https://static.modelcontextprotocol.io/schemas/v2/server-card.schema.json';
    expect(ServerCardSchema.safeParse({ ...card, $schema: v2 }).success).toBe(false);
    const wellKnown = await request(h.app).get('/.well-known/mcp/server-card.json').expect(200);
    expect(wellKnown.text).toBe(res.text);
    expect(wellKnown.headers.etag).toBe(res.headers.etag);
  });
});

describe('the AI Catalog', () => {
  it('is at /.well-known/ai-catalog.json, application/ai-catalog+json, its entry naming the card', async () => {
    const res = await request(h.app).get('/.well-known/ai-catalog.json').expect(200);
    expect(res.headers['content-type']).toMatch(/^application\/ai-catalog\+json/);
    expect(JSON.parse(res.text)).toEqual({
      specVersion: '1.0',
      entries: [
        {
          identifier: 'urn:air:mcp.example.com:mcp:pkgreg-mcp-edge',
          type: 'application/mcp-server-card+json',
          url: `${ORIGIN}/mcp/server-card`,
        },
      ],
    });
    const entry = JSON.parse(res.text).entries[0];
    await request(h.app).get(new URL(entry.url).pathname).expect(200);
  });

  it("the earlier drafts' /.well-known/mcp/catalog.json redirects to it, permanently", async () => {
    const res = await request(h.app).get('/.well-known/mcp/catalog.json').expect(308);
    expect(res.headers.location).toBe('/.well-known/ai-catalog.json');
    expect(res.headers['access-control-allow-origin']).toBe('*');
    expect(res.headers['cache-control']).toBe('public, max-age=300');
  });
});

describe('caching and CORS', () => {
  it('each document has an ETag, the same on every request, and If-None-Match gets a 304', async () => {
    for (const path of DOCUMENTS) {
      const first = await request(h.app).get(path).expect(200);
      const etag = first.headers.etag as string;
      expect({ path, etag }).toEqual({ path, etag: expect.stringMatching(/^"[A-Za-z0-9_-]{27}"$/) });
      expect((await request(h.app).get(path).expect(200)).headers.etag).toBe(etag);
      for (const header of [etag, `W/${etag}`, `"other", ${etag}`, '*']) {
        const again = await request(h.app).get(path).set('If-None-Match', header);
        expect({ path, header, status: again.status, body: again.text }).toEqual({
          path,
          header,
          status: 304,
          body: '',
        });
        expect(again.headers.etag).toBe(etag);
        expect(again.headers).toMatchObject(CORS);
      }
      await request(h.app).get(path).set('If-None-Match', '"other"').expect(200);
    }
    expect((await request(h.app).get(DOCUMENTS[2] as string)).headers.etag).not.toBe(
      (await request(h.app).get(DOCUMENTS[0] as string)).headers.etag,
    );
  });

  it('any origin reads them, revalidates them (a preflight for If-None-Match) and sees the ETag', async () => {
    for (const path of DOCUMENTS) {
      const res = await request(h.app).get(path).set('Origin', 'https://app.example.org').expect(200);
      expect(res.headers).toMatchObject({ ...CORS, 'cache-control': 'public, max-age=300' });
      const preflight = await request(h.app)
        .options(path)
        .set('Origin', 'https://app.example.org')
        .set('Access-Control-Request-Method', 'GET')
        .set('Access-Control-Request-Headers', 'if-none-match');
      expect({ path, status: preflight.status }).toEqual({ path, status: 204 });
      expect(preflight.headers).toMatchObject(CORS);
      const post = await request(h.app).post(path).send({});
      expect({ path, status: post.status, allow: post.headers.allow }).toEqual({
        path,
        status: 405,
        allow: 'GET, HEAD, OPTIONS',
      });
    }
  });

  it("the earlier drafts' catalog path answers a preflight too, so a browser can follow its 308", async () => {
    const path = '/.well-known/mcp/catalog.json';
    const preflight = await request(h.app)
      .options(path)
      .set('Origin', 'https://app.example.org')
      .set('Access-Control-Request-Method', 'GET')
      .set('Access-Control-Request-Headers', 'if-none-match');
    expect(preflight.status).toBe(204);
    expect(preflight.headers).toMatchObject(CORS);
    expect((await request(h.app).post(path).send({})).status).toBe(405);
  });

  it('HEAD answers the headers alone', async () => {
    const res = await request(h.app).head('/mcp/server-card').expect(200);
    expect(res.headers.etag).toMatch(/^"/);
    expect(res.text).toBeUndefined();
  });
});
