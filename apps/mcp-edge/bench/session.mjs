// A bench client's session with the edge: a client_credentials token, the namespace the edge derives
// for it, the headers every /mcp call carries, and a tools/call body builder. Shared by run.mjs,
// ab.mjs and profile.mjs.
import { deriveNamespace } from '@pkgreg/contracts';

/** `mcpUrl` is the edge's `/mcp` URL (its token endpoint is `{mcpUrl}/token`). */
export async function openSession(mcpUrl, client) {
  const tokenRes = await fetch(`${mcpUrl}/token`, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      authorization: `Basic ${Buffer.from(`${client.clientId}:${client.clientSecret}`).toString('base64')}`,
    },
    body: 'grant_type=client_credentials',
  });
  const { access_token: token } = await tokenRes.json();
  // The servers run with PKGREG_PUBLIC_BASE_URL http://localhost:4100, so that is the token's issuer.
  const namespace = deriveNamespace('http://localhost:4100/mcp', client.clientId);
  const headers = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': '2025-11-25',
    authorization: `Bearer ${token}`,
  };
  const call = (name, args) =>
    JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } });
  return { namespace, headers, call };
}

/**
 * `body` (a JSON-RPC request) and `headers` as an MCP 2026-07-28 client sends them: the `_meta` envelope,
 * and the routing headers repeating the method and the name it acts on.
 */
export function modern(body, headers) {
  const message = JSON.parse(body);
  message.params._meta = {
    'io.modelcontextprotocol/protocolVersion': '2026-07-28',
    'io.modelcontextprotocol/clientInfo': { name: 'bench', version: '1' },
    'io.modelcontextprotocol/clientCapabilities': {},
  };
  const name = message.method === 'tools/call' ? message.params.name : message.params.uri;
  return {
    body: JSON.stringify(message),
    headers: {
      ...headers,
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': message.method,
      ...(name === undefined ? {} : { 'mcp-name': name }),
    },
  };
}
