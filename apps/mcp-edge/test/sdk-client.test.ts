import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ClientCredentialsProvider } from '@modelcontextprotocol/sdk/client/auth-extensions.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ALL_SCOPES } from '@pkgreg/contracts';
import { createTestDatabase, TEST_REDIS_URL, type TestDatabase, testKeyPrefix } from '@pkgreg/db/testing';
import { createLogger } from '@pkgreg/server-kit';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEdge, type Edge } from '../src/app.js';
import { loadEnv } from '../src/env.js';
import { createClient } from '../src/oauth/clients.service.js';
import { ensureActiveKey } from '../src/oauth/signing-keys.service.js';
import { deriveNamespace } from '../src/oauth/verify-token.js';

// The official MCP TypeScript SDK client, given only the edge URL, a client id and a secret: it must
// discover the metadata (RFC 9728 → RFC 8414), get a token (client_credentials), initialize, list tools
// and call them over Streamable HTTP against a real listening server.

let t: TestDatabase;
let redis: Redis;
let server: Server;
let edge: Edge;
let base: string;

beforeAll(async () => {
  t = await createTestDatabase();
  redis = new Redis(TEST_REDIS_URL, { keyPrefix: `${testKeyPrefix('sdk')}:` });
  server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const env = loadEnv({
    PKGREG_PUBLIC_BASE_URL: base,
    DATABASE_URL: t.url,
    REDIS_URL: TEST_REDIS_URL,
    EDGE_QUEUE_PREFIX: testKeyPrefix('sdk-q'),
    LOG_LEVEL: 'silent',
  });
  await ensureActiveKey(t.db);
  edge = createEdge({ db: t.db, redis, logger: createLogger('t', 'silent'), env });
  server.on('request', edge.handler);
});
afterAll(async () => {
  await new Promise<void>((r) => {
    server.close(() => r());
    server.closeAllConnections();
  });
  await edge?.shutdown();
  redis?.disconnect();
  await t?.destroy();
});

describe('official MCP SDK client with ClientCredentialsProvider (@modelcontextprotocol/sdk 1.x)', () => {
  it('discovers, authenticates, initializes, lists tools and calls memory put/search', async () => {
    const { clientId, clientSecret } = await createClient(t.db, { name: 'sdk', scopes: [...ALL_SCOPES] });
    const namespace = deriveNamespace(`${base}/mcp`, clientId);
    const provider = new ClientCredentialsProvider({ clientId, clientSecret, expectedIssuer: `${base}/mcp` });
    const transport = new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { authProvider: provider });
    const client = new Client({ name: 'pkgreg-sdk-test', version: '1.0.0' });
    await client.connect(transport);
    try {
      expect(provider.tokens()?.access_token).toBeTruthy();
      expect(client.getServerVersion()?.name).toBe('pkgreg-mcp-edge');
      expect(client.getServerCapabilities()?.tools).toEqual({ listChanged: false });

      const { tools } = await client.listTools();
      expect(tools.map((x) => x.name)).toContain('pkgreg.memory.v1.put');
      expect(tools).toHaveLength(8);

      const put = await client.callTool({
        name: 'pkgreg.memory.v1.put',
        arguments: { namespace, tier: 'stm', content: 'the sdk was here', tags: ['sdk'] },
      });
      expect(put.isError).toBeFalsy();
      const entry = (put.structuredContent as { entry: { entryId: string; content: string } }).entry;
      expect(entry.content).toBe('the sdk was here');
      expect(JSON.parse((put.content as { text: string }[])[0]?.text ?? '{}').entry.entryId).toBe(
        entry.entryId,
      );

      const search = await client.callTool({
        name: 'pkgreg.memory.v1.search',
        arguments: { namespace, query: 'sdk' },
      });
      const found = search.structuredContent as { results: { entry: { entryId: string } }[]; total: number };
      expect(found.total).toBe(1);
      expect(found.results[0]?.entry.entryId).toBe(entry.entryId);

      const info = await client.callTool({ name: 'pkgreg.system.v1.info', arguments: {} });
      expect((info.structuredContent as { server: { backendMode: string } }).server.backendMode).toBe(
        'development',
      );
    } finally {
      await client.close();
    }
  }, 30_000);
});
