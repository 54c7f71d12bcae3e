import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ClientCredentialsProvider } from '@modelcontextprotocol/sdk/client/auth-extensions.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ALL_SCOPES, deriveNamespace } from '@pkgreg/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../src/oauth/clients.service.js';
import { createHarness, type Harness } from './helpers.js';

// The official MCP TypeScript SDK client, given only the edge URL, a client id and a secret: it must
// discover the metadata (RFC 9728 → RFC 8414), get a token (client_credentials), initialize, list tools
// and call them over Streamable HTTP against a real listening server.

let h: Harness;
let server: Server;
let base: string;

beforeAll(async () => {
  server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  h = await createHarness({ PKGREG_PUBLIC_BASE_URL: base });
  server.on('request', h.edge.handler);
});
afterAll(async () => {
  await new Promise<void>((r) => {
    server.close(() => r());
    server.closeAllConnections();
  });
  await h?.close();
});

describe('official MCP SDK client with ClientCredentialsProvider (@modelcontextprotocol/sdk 1.x)', () => {
  it('discovers, authenticates, initializes, lists tools and calls memory put/search', async () => {
    const { clientId, clientSecret } = await createClient(h.t.db, { name: 'sdk', scopes: [...ALL_SCOPES] });
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
      expect(tools).toHaveLength(10);

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
