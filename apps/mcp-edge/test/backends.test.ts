import { SCOPES } from '@pkgreg/contracts';
import { createDb } from '@pkgreg/db';
import { bodySha256, ENVELOPE_HEADER, signEnvelope, verifyEnvelope } from '@pkgreg/runtime';
import { SignJWT } from 'jose';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  allowClient,
  clientWithToken,
  createHarness,
  expectRpcError,
  type Harness,
  rpc,
  type TestClient,
  tokenAt,
} from './helpers.js';
import { listenReceiver, type TestReceiver } from './tunnel-receiver.js';

// mcp-edge.md, Deployment backends; decisions.md, Backends and Tunnel envelope.

const SECRET = 's'.repeat(40);
let h: Harness;
let c: TestClient;
/** A client with stm scopes only, also served by the tunnel session. */
let stmOnly: TestClient;
/** The local runtime behind the tunnel: its own storage (a schema of this test's database here). */
let receiver: TestReceiver;
/** Authorization headers the local runtime received: the caller's token must never be among them. */
const seenAuthorization = () => receiver.seen.map((req) => req.headers.authorization);

beforeAll(async () => {
  receiver = await listenReceiver();
  const { target } = receiver;
  h = await createHarness({
    PKGREG_PUBLIC_MCP_HOSTED_BINDINGS_JSON: JSON.stringify([
      { host: 'acme.mcp.example.com', tenant: 'acme' },
      { handle: 'beta', tenant: 'beta' },
    ]),
    PKGREG_PUBLIC_MCP_TUNNEL_SESSIONS_JSON: JSON.stringify([
      { host: 'dev.tunnel.example.com', sessionId: 'sess-1', target, secret: SECRET },
      { handle: 'gone', sessionId: 'sess-2', target, secret: SECRET, expiresAt: '2020-01-01T00:00:00Z' },
      {
        host: 'down.tunnel.example.com',
        sessionId: 'sess-3',
        target: 'http://127.0.0.1:9/tunnel/mcp',
        secret: SECRET,
      },
    ]),
  });
  c = await clientWithToken(h);
  // Issue 26: each tenant and tunnel session serves only the clients it names.
  for (const [mode, id] of [
    ['hosted', 'acme'],
    ['hosted', 'beta'],
    ['local_tunnel', 'sess-1'],
    ['local_tunnel', 'sess-3'],
  ] as const)
    await allowClient(h, { mode, id }, c);
  stmOnly = await clientWithToken(h, [SCOPES.stmWrite, SCOPES.stmRead]);
  await allowClient(h, { mode: 'local_tunnel', id: 'sess-1' }, stmOnly);
  await receiver.serve(h, {
    sessionId: 'sess-1',
    secret: SECRET,
    schema: 'local_runtime',
    allowedClients: [c.clientId, stmOnly.clientId, 'x'],
  });
});
afterAll(async () => {
  await receiver?.close();
  await h?.close();
});

/** A token of `c` for each host's own resource (issue 26: a token is for one host's resource). */
const tokens = new Map<string, Promise<string>>();
const tokenOf = (host: string) => {
  if (host.startsWith('localhost')) return Promise.resolve(c.token);
  let token = tokens.get(host);
  if (!token) {
    token = tokenAt(h, c, host);
    tokens.set(host, token);
  }
  return token;
};
const at = async (host: string, method: string, params: Record<string, unknown> = {}) =>
  rpc(h, await tokenOf(host), method, params, { headers: { Host: host } });
const info = async (host: string) =>
  (await at(host, 'tools/call', { name: 'pkgreg.system.v1.info' })).body.result.server.backendMode;
const putAt = (host: string, content: string) =>
  at(host, 'tools/call', {
    name: 'pkgreg.memory.v1.put',
    arguments: { namespace: c.namespace, tier: 'stm', content },
  });
const countIn = async (schema: string, content: string) => {
  const db = createDb(h.t.url, { schema, max: 1 });
  try {
    const rows = await db
      .selectFrom('memory_entries')
      .select('entry_id')
      .where('content', '=', content)
      .execute();
    return rows.length;
  } finally {
    await db.destroy();
  }
};

describe('one contract across backends (mcp-edge.md, Deployment backends; System info result)', () => {
  it('system info has the same shape everywhere; only server.backendMode differs here', async () => {
    const infoAt = async (host: string) =>
      (await at(host, 'tools/call', { name: 'pkgreg.system.v1.info' })).body.result.structuredContent;
    const dev = await infoAt('localhost:4100');
    for (const [host, mode] of [
      ['acme.mcp.example.com', 'hosted'],
      ['dev.tunnel.example.com', 'local_tunnel'],
    ] as const) {
      const other = await infoAt(host);
      expect(other.server.backendMode).toBe(mode);
      expect({ ...other, server: { ...other.server, backendMode: 'development' } }).toEqual(dev);
    }
  });

  it('tools/list is the same in every backend', async () => {
    const names = async (host: string) =>
      (await at(host, 'tools/list')).body.result.tools.map((t: { name: string }) => t.name);
    const dev = await names('localhost:4100');
    expect(await names('acme.mcp.example.com')).toEqual(dev);
    expect(await names('dev.tunnel.example.com')).toEqual(dev);
  });
});

describe('hosted backend: the tenant’s own Postgres schema (decisions.md, Backends)', () => {
  it('resolves by exact host and by handle (first label), reports backendMode hosted', async () => {
    expect(await info('acme.mcp.example.com')).toBe('hosted');
    expect(await info('beta.mcp.example.com:443')).toBe('hosted');
    expect(await info('localhost:4100')).toBe('development');
  });

  it('memory written through a hosted host lands in that tenant’s schema only', async () => {
    expect((await putAt('acme.mcp.example.com', 'tenant acme note')).body.result.entry.status).toBe('active');
    expect(await countIn('tenant_acme', 'tenant acme note')).toBe(1);
    expect(await countIn('public', 'tenant acme note')).toBe(0);
    expect(await countIn('tenant_beta', 'tenant acme note')).toBe(0);
    // And is invisible from development.
    const search = await at('localhost:4100', 'tools/call', {
      name: 'pkgreg.memory.v1.search',
      arguments: { namespace: c.namespace, query: 'tenant acme' },
    });
    expect(search.body.result.total).toBe(0);
  });
});

describe('local_tunnel backend: admitted calls forwarded with a signed envelope', () => {
  it('answers system info at the edge with backendMode local_tunnel', async () => {
    expect(await info('dev.tunnel.example.com')).toBe('local_tunnel');
  });

  it('forwards memory calls to the local runtime, which stores them in its own storage', async () => {
    const put = await putAt('dev.tunnel.example.com', 'through the tunnel');
    expect(put.status).toBe(200);
    expect(put.body.result.entry.namespace).toBe(c.namespace);
    expect(await countIn('local_runtime', 'through the tunnel')).toBe(1);
    expect(await countIn('public', 'through the tunnel')).toBe(0);
    const get = await at('dev.tunnel.example.com', 'tools/call', {
      name: 'pkgreg.memory.v1.get',
      arguments: { namespace: c.namespace, entryId: put.body.result.entry.entryId },
    });
    expect(get.body.result.entry.content).toBe('through the tunnel');
  });

  it('never forwards the inbound bearer token to the local runtime', async () => {
    expect(seenAuthorization().length).toBeGreaterThan(0);
    expect(seenAuthorization().every((a) => a === undefined)).toBe(true);
  });

  it('an unreachable local runtime is tunnel_unavailable with HTTP 503', async () => {
    const res = await putAt('down.tunnel.example.com', 'nowhere');
    expectRpcError(res, 503, 'tunnel_unavailable');
    expect(res.body.error.code).toBe(-32014);
    expect(res.body.error.message).toBe('local runtime unreachable');
  });

  it('admission still happens at the edge: no token, wrong namespace never reach the runtime', async () => {
    expectRpcError(
      await rpc(h, undefined, 'ping', {}, { headers: { Host: 'dev.tunnel.example.com' } }),
      401,
      'token_invalid',
    );
    const other = await at('dev.tunnel.example.com', 'tools/call', {
      name: 'pkgreg.memory.v1.put',
      arguments: { namespace: `app:${'0'.repeat(64)}`, tier: 'stm', content: 'x' },
    });
    expectRpcError(other, 200, 'namespace_unauthorized');
  });

  it('tasks are polled through the tunnel and stay subject-scoped', async () => {
    const res = await at('dev.tunnel.example.com', 'tasks/get', {
      taskId: '00000000-0000-4000-8000-000000000000',
    });
    expectRpcError(res, 200, 'task_not_found');
  });

  it('an expired tunnel session does not resolve (deployment_not_resolved)', async () => {
    const res = await rpc(h, c.token, 'ping', {}, { headers: { Host: 'gone.tunnel.example.com' } });
    expectRpcError(res, 421, 'deployment_not_resolved');
  });
});

describe('tunnel envelope, receiving side (decisions.md, Tunnel envelope)', () => {
  const body = JSON.stringify({
    method: 'tasks/get',
    args: { taskId: '00000000-0000-4000-8000-000000000000' },
    caller: { namespace: `app:${'a'.repeat(64)}`, clientId: 'x', scopes: [] },
  });
  const namespace = `app:${'a'.repeat(64)}`;
  const check = (envelope: string | undefined, b: string = body, sessionId = 'sess-1') =>
    verifyEnvelope({ envelope, sessionId, secret: SECRET, body: b, nonces: receiver.nonces });

  it('accepts a fresh envelope once, then tunnel_replay_detected', async () => {
    const env = await signEnvelope({ sessionId: 'sess-1', secret: SECRET, namespace, body });
    await expect(check(env)).resolves.toMatchObject({ namespace });
    await expect(check(env)).rejects.toMatchObject({ reason: 'tunnel_replay_detected' });
  });

  it('refuses a bad signature, another sid, a body hash mismatch, an expired or over-long envelope', async () => {
    const wrongKey = await signEnvelope({ sessionId: 'sess-1', secret: 'x'.repeat(40), namespace, body });
    await expect(check(wrongKey)).rejects.toMatchObject({ reason: 'tunnel_envelope_invalid' });
    const otherSid = await signEnvelope({ sessionId: 'sess-9', secret: SECRET, namespace, body });
    await expect(check(otherSid)).rejects.toMatchObject({ reason: 'tunnel_envelope_invalid' });
    const env = await signEnvelope({ sessionId: 'sess-1', secret: SECRET, namespace, body });
    await expect(check(env, `${body} `)).rejects.toMatchObject({ reason: 'tunnel_envelope_invalid' });
    const now = Math.floor(Date.now() / 1000);
    const craft = (iat: number, exp: number) =>
      new SignJWT({ sid: 'sess-1', bodySha256: bodySha256(body) })
        .setProtectedHeader({ alg: 'HS256' })
        .setSubject(namespace)
        .setJti(crypto.randomUUID())
        .setIssuedAt(iat)
        .setExpirationTime(exp)
        .sign(new TextEncoder().encode(SECRET));
    await expect(check(await craft(now - 120, now - 60))).rejects.toMatchObject({
      reason: 'tunnel_envelope_invalid',
    });
    await expect(check(await craft(now, now + 600))).rejects.toMatchObject({
      reason: 'tunnel_envelope_invalid',
    });
    await expect(check(undefined)).rejects.toMatchObject({ reason: 'tunnel_envelope_invalid' });
  });

  it('the receiver endpoint refuses a replayed forwarded request and one whose caller differs from sub', async () => {
    const env = await signEnvelope({ sessionId: 'sess-1', secret: SECRET, namespace, body });
    const send = (e: string, b: string) =>
      request(receiver.target.replace('/tunnel/mcp', ''))
        .post('/tunnel/mcp')
        .set('content-type', 'application/json')
        .set(ENVELOPE_HEADER, e)
        .send(b);
    const first = await send(env, body);
    expect(first.status).toBe(200);
    expect(first.body.error.reason).toBe('task_not_found');
    const replay = await send(env, body);
    expect(replay.status).toBe(409);
    expect(replay.body.error.reason).toBe('tunnel_replay_detected');
    const otherNs = `app:${'b'.repeat(64)}`;
    const spoof = await signEnvelope({ sessionId: 'sess-1', secret: SECRET, namespace: otherNs, body });
    const res = await send(spoof, body);
    expect(res.status).toBe(401);
    expect(res.body.error.reason).toBe('tunnel_envelope_invalid');
  });

  it('scope checks of the entry tier also apply behind the tunnel', async () => {
    const mine = stmOnly;
    const put = await rpc(
      h,
      await tokenAt(h, mine, 'dev.tunnel.example.com'),
      'tools/call',
      {
        name: 'pkgreg.memory.v1.put',
        arguments: { namespace: mine.namespace, tier: 'stm', content: 'tunnel stm' },
      },
      { headers: { Host: 'dev.tunnel.example.com' } },
    );
    expect(put.body.result.entry.tier).toBe('stm');
  });
});
