import { SCOPES } from '@pkgreg/contracts';
import request from 'supertest';
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  callTool,
  clientWithToken,
  createHarness,
  expectRpcError,
  forgeToken,
  HOST,
  rpc,
  type TestClient,
  useHarness,
  withinOneWindow,
} from './helpers.js';

// decisions.md, MCP edge: "Admission order and wire form" — one test per table row, plus the
// Streamable HTTP transport rules (MCP 2025-11-25, basic/transports) the edge enforces.

const h = useHarness({
  EDGE_RATE_LIMIT_PER_MINUTE: '5',
  EDGE_RATE_LIMITS_JSON: JSON.stringify({ 'pkgreg.agents.v1.list': 2 }),
  EDGE_INVOKE_PER_MINUTE: '2',
  EDGE_COMPACT_PER_MINUTE: '1',
  EDGE_ALLOWED_ORIGINS: '',
});
let c: TestClient;
beforeAll(async () => {
  c = await clientWithToken(h);
});

const raw = (body: string, headers: Record<string, string> = {}) => {
  const req = request(h.app)
    .post('/mcp')
    .set('Host', HOST)
    .set('Content-Type', 'application/json')
    .set('Authorization', `Bearer ${c.token}`);
  for (const [k, v] of Object.entries(headers)) req.set(k, v);
  return req.send(body);
};

describe('row: host maps to no backend → 421 deployment_not_resolved', () => {
  it('refuses an unknown host before looking at the token', async () => {
    const res = await rpc(h, undefined, 'ping', {}, { headers: { Host: 'unknown.example.com' } });
    expectRpcError(res, 421, 'deployment_not_resolved');
    expect(res.body.error.code).toBe(-32011);
  });

  it('resolves the public base host and localhost to development', async () => {
    for (const host of ['localhost:4100', '127.0.0.1:9999', '[::1]:4100']) {
      const r = await rpc(h, c.token, 'ping', {}, { headers: { Host: host } });
      expect(r.status).toBe(200);
    }
  });
});

describe('localhost is development only outside production', () => {
  it('in production a localhost Host other than the public base host does not resolve', async () => {
    const prod = await createHarness({ NODE_ENV: 'production', EDGE_COOKIE_KEYS: 'k'.repeat(32) });
    try {
      const pc = await clientWithToken(prod);
      expectRpcError(
        await rpc(prod, pc.token, 'ping', {}, { headers: { Host: '127.0.0.1:4100' } }),
        421,
        'deployment_not_resolved',
      );
      expect((await rpc(prod, pc.token, 'ping')).status).toBe(200);
      const origin = await rpc(prod, pc.token, 'ping', {}, { headers: { Origin: 'http://localhost:5173' } });
      expectRpcError(origin, 403, 'origin_not_allowed');
    } finally {
      await prod.close();
    }
  });
});

describe('row: Origin present and not allowed → 403', () => {
  it('refuses a foreign Origin (DNS rebinding) before the token check', async () => {
    const res = await rpc(h, undefined, 'ping', {}, { headers: { Origin: 'https://evil.example' } });
    expectRpcError(res, 403, 'origin_not_allowed');
  });

  it('admits no Origin, the public base origin and localhost origins', async () => {
    for (const origin of ['http://localhost:4100', 'http://127.0.0.1:5173']) {
      expect((await rpc(h, c.token, 'ping', {}, { headers: { Origin: origin } })).status).toBe(200);
    }
    expect((await rpc(h, c.token, 'ping')).status).toBe(200);
  });
});

describe('row: token missing or invalid → 401 + WWW-Authenticate (full battery in security.test.ts)', () => {
  it('refuses a non-Bearer Authorization scheme', async () => {
    const res = await rpc(h, undefined, 'ping', {}, { headers: { Authorization: 'Basic Zm9vOmJhcg==' } });
    expectRpcError(res, 401, 'token_invalid');
  });

  it('reads the header afresh however often it comes: a refused one stays refused, the scheme in any case', async () => {
    // The handler remembers each Authorization header's token (mcp.handler.ts, tokenOf): what it
    // remembers must answer exactly as the parse would.
    for (let i = 0; i < 3; i++) {
      const bad = await rpc(h, undefined, 'ping', {}, { headers: { Authorization: `Bearer ${c.token} x` } });
      expectRpcError(bad, 401, 'token_invalid');
      for (const header of [`Bearer ${c.token}`, `bearer ${c.token}`, ` BEARER ${c.token} `]) {
        expect((await rpc(h, undefined, 'ping', {}, { headers: { Authorization: header } })).status).toBe(
          200,
        );
      }
      const tampered = await rpc(
        h,
        undefined,
        'ping',
        {},
        { headers: { Authorization: `Bearer ${c.token}A` } },
      );
      expectRpcError(tampered, 401, 'token_invalid');
    }
  });
});

describe('row: body not JSON / not JSON-RPC / a batch → 400 -32700 or -32600', () => {
  it('-32700 for a body that is not JSON', async () => {
    const res = await raw('{"jsonrpc": "2.0", "id": 1,');
    expectRpcError(res, 400, 'parse_error');
    expect(res.body.error.code).toBe(-32700);
    expect(res.body.id).toBeNull();
  });

  it('-32600 for a batch', async () => {
    const res = await raw(JSON.stringify([{ jsonrpc: '2.0', id: 1, method: 'ping' }]));
    expectRpcError(res, 400, 'invalid_request');
    expect(res.body.error.code).toBe(-32600);
  });

  it('-32600 for a message that is not JSON-RPC 2.0', async () => {
    for (const body of [
      { id: 1, method: 'ping' },
      { jsonrpc: '1.0', id: 1, method: 'ping' },
      { jsonrpc: '2.0', id: { x: 1 }, method: 'ping' },
      { jsonrpc: '2.0', id: 1, method: 'ping', params: [1] },
      { jsonrpc: '2.0', id: 1 },
    ]) {
      const res = await raw(JSON.stringify(body));
      expectRpcError(res, 400, 'invalid_request');
    }
  });

  it('echoes the request id in errors once the body could be read', async () => {
    const res = await rpc(h, c.token, 'nope/unknown', {}, { id: 'abc-1' });
    expectRpcError(res, 200, 'method_not_found');
    expect(res.body.id).toBe('abc-1');
    expect(res.body.error.code).toBe(-32601);
  });

  it('unknown tool → -32601, bad arguments → -32602 request_schema_invalid with issues', async () => {
    const unknown = await callTool(h, c.token, 'pkgreg.memory.v9.put');
    expectRpcError(unknown, 200, 'method_not_found');
    const bad = await callTool(h, c.token, 'pkgreg.memory.v1.put', { namespace: c.namespace, tier: 'mtm' });
    expectRpcError(bad, 200, 'request_schema_invalid');
    expect(bad.body.error.code).toBe(-32602);
    expect(bad.body.error.data.issues.length).toBeGreaterThan(0);
    const noName = await rpc(h, c.token, 'tools/call', {});
    expectRpcError(noName, 200, 'request_schema_invalid');
  });
});

describe('Streamable HTTP transport, stateless (MCP 2025-11-25 basic/transports)', () => {
  it('notifications get 202 with no body', async () => {
    const res = await raw(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }));
    expect(res.status).toBe(202);
    expect(res.text).toBe('');
  });

  it('GET and DELETE /mcp → 405 (no server stream, no session)', async () => {
    const get = await request(h.app).get('/mcp').set('Host', HOST).set('Accept', 'text/event-stream');
    expect(get.status).toBe(405);
    expect(get.headers.allow).toBe('POST');
    expect((await request(h.app).delete('/mcp').set('Host', HOST)).status).toBe(405);
  });

  it('unsupported MCP-Protocol-Version → 400; a supported older one and none are accepted', async () => {
    const bad = await rpc(h, c.token, 'ping', {}, { headers: { 'MCP-Protocol-Version': '1900-01-01' } });
    expectRpcError(bad, 400, 'transport_invalid');
    const older = await rpc(h, c.token, 'ping', {}, { headers: { 'MCP-Protocol-Version': '2025-06-18' } });
    expect(older.status).toBe(200);
    const none = await raw(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }));
    expect(none.status).toBe(200);
  });

  it('Content-Type other than application/json → 415; Accept without JSON → 406', async () => {
    const ct = await raw(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }), {
      'Content-Type': 'text/plain',
    });
    expectRpcError(ct, 415, 'transport_invalid');
    const acc = await rpc(h, c.token, 'ping', {}, { headers: { Accept: 'text/event-stream' } });
    expectRpcError(acc, 406, 'transport_invalid');
  });

  it('refuses bodies over 64 KiB', async () => {
    const res = await raw(
      JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping', params: { pad: 'x'.repeat(70_000) } }),
    );
    expect(res.status).toBe(413);
    expect(res.body.error.data.reason).toBe('invalid_request');
  });
});

describe('row: scope_insufficient → 403 + WWW-Authenticate insufficient_scope', () => {
  it('names the missing scope in the challenge and in data', async () => {
    const t = await forgeToken(h, { scope: SCOPES.stmRead, clientId: c.clientId });
    const res = await callTool(h, t, 'pkgreg.memory.v1.put', {
      namespace: c.namespace,
      tier: 'ltm',
      content: 'x',
    });
    expectRpcError(res, 403, 'scope_insufficient');
    expect(res.headers['www-authenticate']).toContain(`scope="${SCOPES.ltmWrite}"`);
    expect(res.body.error.data.requiredScopes).toEqual([SCOPES.ltmWrite]);
    expect(res.body.error.code).toBe(-32003);
  });
});

describe('row: quota_exceeded, rate_limited → 429 + Retry-After (decisions.md: Quotas)', () => {
  // Each test counts to a limit inside one fixed minute.
  beforeEach(() => withinOneWindow());

  it('rate_limited after the per-tool rate for this namespace, with a configurable override', async () => {
    const mine = await clientWithToken(h, [SCOPES.systemRead]);
    for (let i = 0; i < 2; i++)
      expect((await callTool(h, mine.token, 'pkgreg.agents.v1.list')).status).toBe(200);
    const res = await callTool(h, mine.token, 'pkgreg.agents.v1.list');
    expectRpcError(res, 429, 'rate_limited');
    const retry = Number(res.headers['retry-after']);
    expect(retry).toBeGreaterThanOrEqual(1);
    expect(retry).toBeLessThanOrEqual(60);
    // Per tool: info still has its own (default 5) budget.
    expect((await callTool(h, mine.token, 'pkgreg.system.v1.info')).status).toBe(200);
    // Per client: another client starts a fresh window.
    const again = await clientWithToken(h, [SCOPES.systemRead]);
    expect((await callTool(h, again.token, 'pkgreg.agents.v1.list')).status).toBe(200);
  });

  it('quota_exceeded after invokePerMinute invokes', async () => {
    const mine = await clientWithToken(h, [SCOPES.agentsInvoke]);
    const invoke = () =>
      callTool(h, mine.token, 'pkgreg.agents.v1.invoke', {
        agentId: 'engineering.workflow',
        input: { type: 'text', text: 'plan' },
        executionMode: 'async',
      });
    expect((await invoke()).status).toBe(200);
    expect((await invoke()).status).toBe(200);
    const res = await invoke();
    expectRpcError(res, 429, 'quota_exceeded');
    expect(res.headers['retry-after']).toBeDefined();
  });

  it('quota_exceeded after compactPerMinute compactions', async () => {
    const mine = await clientWithToken(h, [SCOPES.stmRead, SCOPES.stmWrite]);
    const compact = () =>
      callTool(h, mine.token, 'pkgreg.memory.v1.compact', {
        namespace: mine.namespace,
        strategy: 'summarize',
        executionMode: 'async',
      });
    expect((await compact()).status).toBe(200);
    expectRpcError(await compact(), 429, 'quota_exceeded');
  });

  it('a burst of concurrent requests still gives each its own verdict (rate, quota, admitted)', async () => {
    const invoker = await clientWithToken(h, [SCOPES.agentsInvoke]);
    const reader = await clientWithToken(h, [SCOPES.systemRead]);
    const invoke = () =>
      callTool(h, invoker.token, 'pkgreg.agents.v1.invoke', {
        agentId: 'engineering.workflow',
        input: { type: 'text', text: 'plan' },
        executionMode: 'async',
      });
    // Interleaved so the checks of both callers go to Redis in the same pipeline.
    const results = await Promise.all([
      invoke(),
      callTool(h, reader.token, 'pkgreg.system.v1.info'),
      invoke(),
      callTool(h, reader.token, 'pkgreg.system.v1.info'),
      invoke(),
      callTool(h, reader.token, 'pkgreg.system.v1.info'),
    ]);
    const invokes = [results[0], results[2], results[4]];
    const infos = [results[1], results[3], results[5]];
    expect(infos.map((r) => r?.status)).toEqual([200, 200, 200]);
    expect(invokes.filter((r) => r?.status === 200)).toHaveLength(2);
    const refused = invokes.find((r) => r?.status === 429);
    expect(refused).toBeDefined();
    if (refused) expectRpcError(refused, 429, 'quota_exceeded');
  });

  it('counts atomically: concurrent requests never exceed the rate', async () => {
    const mine = await clientWithToken(h, [SCOPES.systemRead]);
    const results = await Promise.all(
      Array.from({ length: 12 }, () => callTool(h, mine.token, 'pkgreg.system.v1.info')),
    );
    expect(results.filter((r) => r.status === 200)).toHaveLength(5);
    expect(results.filter((r) => r.status === 429)).toHaveLength(7);
  });

  it("keeps its counters under the Redis client's key prefix (one script call counts a whole turn)", async () => {
    const mine = await clientWithToken(h, [SCOPES.systemRead]);
    await Promise.all([1, 2, 3].map(() => callTool(h, mine.token, 'pkgreg.system.v1.info')));
    const prefix = h.redis.options.keyPrefix ?? '';
    expect(prefix).not.toBe('');
    // A client without the prefix sees the raw key names.
    const raw = h.redis.duplicate({ keyPrefix: '' });
    try {
      const keys = await raw.keys(`*edge:rate:${mine.namespace}:*`);
      expect(keys.length).toBe(1);
      expect(keys[0]?.startsWith(`${prefix}edge:rate:${mine.namespace}:`)).toBe(true);
      expect(await raw.get(keys[0] as string)).toBe('3');
    } finally {
      raw.disconnect();
    }
  });
});

describe('every JSON-RPC error carries data.reason and data.requestId (decisions.md)', () => {
  it('and the request id is the X-Request-Id response header', async () => {
    const res = await rpc(h, undefined, 'ping');
    expect(res.body.error.data.requestId).toBe(res.headers['x-request-id']);
  });
});
