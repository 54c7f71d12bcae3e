import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { deriveNamespace } from '@pkgreg/contracts';
import { createDb } from '@pkgreg/db';
import { createLogger } from '@pkgreg/server-kit';
import { decodeJwt, SignJWT } from 'jose';
import { sql } from 'kysely';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEdge, type Edge } from '../src/app.js';
import { loadEnv } from '../src/env.js';
import { disableClient } from '../src/oauth/clients.service.js';
import {
  allowClient,
  BASE,
  clientWithToken,
  createHarness,
  eventually,
  expectRpcError,
  forgeToken,
  type Harness,
  RESOURCE,
  resourceOf,
  rpc,
  type TestClient,
  tokenAt,
  tokenFor,
  unknownKey,
} from './helpers.js';
import { listenReceiver, type TestReceiver } from './tunnel-receiver.js';

// Issue 26, "A client reaches only the tenants and tunnels it is allowed to": each hosted tenant and
// tunnel session serves only the clients it names; any other is refused exactly as a host that maps to no
// backend (so it cannot tell which hosts exist), before anything is dispatched. A token is for one host's
// resource (its `aud`); a disabled client's tokens stop at once, on every edge.

const SECRET = 'z'.repeat(40);
const ACME = 'acme.mcp.example.com';
const TUNNEL = 'alice.tunnel.example.com';
let h: Harness;
/** A second edge on the same database and Redis (several edges are one service). */
let second: Edge;
/** alice's local runtime behind the session's HTTP target. */
let receiver: TestReceiver;
/** Allowed on acme and beta (stored grants) and on alice's tunnel session. */
let owner: TestClient;
/** Every scope, allowed on no tenant and no session. */
let intruder: TestClient;
/** Allowed on beta only. */
let neighbour: TestClient;

beforeAll(async () => {
  receiver = await listenReceiver();
  h = await createHarness({
    EDGE_RATE_LIMIT_PER_MINUTE: '100000',
    EDGE_INVOKE_PER_MINUTE: '100000',
    EDGE_COMPACT_PER_MINUTE: '100000',
    PKGREG_PUBLIC_MCP_HOSTED_BINDINGS_JSON: JSON.stringify([
      { host: ACME, tenant: 'acme' },
      { handle: 'beta', tenant: 'beta' },
    ]),
    PKGREG_PUBLIC_MCP_TUNNEL_SESSIONS_JSON: JSON.stringify([
      { host: TUNNEL, sessionId: 'alice-sess', target: receiver.target, secret: SECRET },
    ]),
  });
  second = createEdge({ db: h.t.db, redis: h.redis, logger: createLogger('second', 'silent'), env: h.env });
  [owner, intruder, neighbour] = [
    await clientWithToken(h),
    await clientWithToken(h),
    await clientWithToken(h),
  ];
  await allowClient(h, { mode: 'hosted', id: 'acme' }, owner);
  await allowClient(h, { mode: 'hosted', id: 'beta' }, owner);
  await allowClient(h, { mode: 'local_tunnel', id: 'alice-sess' }, owner);
  await allowClient(h, { mode: 'hosted', id: 'beta' }, neighbour);
  await receiver.serve(h, {
    sessionId: 'alice-sess',
    secret: SECRET,
    schema: 'alice_store',
    allowedClients: [owner.clientId],
  });
});
afterAll(async () => {
  await receiver?.close();
  await second?.shutdown();
  await h?.close();
});

/** Calls that reached the tunnel's local runtime. */
const forwarded = () => receiver.seen.length;

const at = (host: string, token: string, method: string, params: Record<string, unknown> = {}, edge?: Edge) =>
  rpc(edge ?? h, token, method, params, { headers: { Host: host } });

/** Every kind of call: ones answered at the edge, memory writes, invokes, compactions, task polls. */
const CALLS = (namespace: string): Array<[string, Record<string, unknown>]> => [
  ['ping', {}],
  ['initialize', { protocolVersion: '2025-11-25', clientInfo: { name: 't', version: '1' } }],
  ['tools/list', {}],
  ['tools/call', { name: 'pkgreg.system.v1.info', arguments: {} }],
  [
    'tools/call',
    { name: 'pkgreg.memory.v1.put', arguments: { namespace, tier: 'stm', content: 'written by a stranger' } },
  ],
  [
    'tools/call',
    {
      name: 'pkgreg.agents.v1.invoke',
      arguments: {
        agentId: 'engineering.workflow',
        input: { type: 'text', text: 'plan' },
        memory: { namespace, readTiers: [], writeTiers: ['stm'] },
        executionMode: 'async',
      },
    },
  ],
  [
    'tools/call',
    {
      name: 'pkgreg.memory.v1.compact',
      arguments: { namespace, strategy: 'summarize', executionMode: 'async' },
    },
  ],
  ['tasks/get', { taskId: '00000000-0000-4000-8000-000000000000' }],
  ['tasks/result', { taskId: '00000000-0000-4000-8000-000000000000' }],
  ['no/such/method', {}],
];

/** What a response says, without its request id: two refusals must be the same bytes otherwise. */
function shape(res: { status: number; headers: Record<string, string>; body: Record<string, unknown> }) {
  const { error } = res.body as { error?: { data?: Record<string, unknown> } };
  return {
    status: res.status,
    wwwAuthenticate: res.headers['www-authenticate'],
    body: { ...res.body, error: error ? { ...error, data: { ...error.data, requestId: '-' } } : undefined },
  };
}

/** Rows of `namespace` in a schema's memory or tasks (0 when the schema was never provisioned). */
async function rowsIn(schema: string, table: 'memory_entries' | 'tasks', namespace: string): Promise<number> {
  const exists = await sql`select 1 from information_schema.schemata where schema_name = ${schema}`.execute(
    h.t.db,
  );
  if (!exists.rows.length) return 0;
  const db = createDb(h.t.url, { schema, max: 1 });
  try {
    const rows =
      table === 'tasks'
        ? await db.selectFrom('tasks').select('task_id').where('subject_namespace', '=', namespace).execute()
        : await db
            .selectFrom('memory_entries')
            .select('entry_id')
            .where('namespace', '=', namespace)
            .execute();
    return rows.length;
  } finally {
    await db.destroy();
  }
}

describe('a tenant or tunnel session serves only the clients it names', () => {
  it('any other client is answered exactly as an unknown host, for every method, host and token', async () => {
    const unknown = shape(await at('nowhere.example.com', intruder.token, 'ping'));
    expect(unknown.status).toBe(421);
    const forged = await forgeToken(h, { clientId: intruder.clientId, aud: resourceOf(ACME) });
    const tokens = [intruder.token, await tokenFor(h, intruder), forged];
    // Other hosts of the same backends (exact host, handle under two domains, a port), the tunnel, and a
    // client allowed elsewhere (neighbour is allowed on beta, not on acme or the tunnel).
    const cases: Array<[string, TestClient, string[]]> = [
      [ACME, intruder, tokens],
      [`${ACME}:443`, intruder, tokens],
      ['beta.mcp.example.com', intruder, tokens],
      ['beta.elsewhere.example:4100', intruder, tokens],
      [TUNNEL, intruder, tokens],
      [ACME, neighbour, [neighbour.token, await tokenAt(h, neighbour, 'beta.mcp.example.com')]],
      [TUNNEL, neighbour, [neighbour.token]],
    ];
    for (const [host, who, whoTokens] of cases) {
      for (const token of whoTokens) {
        for (const [method, params] of CALLS(who.namespace)) {
          const res = await at(host, token, method, params);
          expect(shape(res), `${host} ${method}`).toEqual(unknown);
        }
      }
    }
    // Nothing was written, enqueued or sent through the tunnel.
    expect(forwarded()).toBe(0);
    for (const who of [intruder, neighbour]) {
      for (const schema of ['tenant_acme', 'tenant_beta', 'public']) {
        expect(await rowsIn(schema, 'memory_entries', who.namespace)).toBe(0);
        expect(await rowsIn(schema, 'tasks', who.namespace)).toBe(0);
      }
      expect(await rowsIn('alice_store', 'memory_entries', who.namespace)).toBe(0);
    }
  });

  it('a client it names is served, on every host of the backend, with a token for that host', async () => {
    for (const host of [ACME, 'beta.mcp.example.com', TUNNEL]) {
      const token = await tokenAt(h, owner, host);
      const put = await at(host, token, 'tools/call', {
        name: 'pkgreg.memory.v1.put',
        arguments: { namespace: owner.namespace, tier: 'stm', content: `owner at ${host}` },
      });
      expect(put.status, JSON.stringify(put.body)).toBe(200);
    }
    expect(await rowsIn('tenant_acme', 'memory_entries', owner.namespace)).toBe(1);
    expect(await rowsIn('alice_store', 'memory_entries', owner.namespace)).toBe(1);
    expect(forwarded()).toBe(1);
    // neighbour is served where it is named.
    const beta = await tokenAt(h, neighbour, 'beta.mcp.example.com');
    expect((await at('beta.mcp.example.com', beta, 'ping')).status).toBe(200);
  });

  it('a grant and its revocation apply at once, on every edge', async () => {
    const late = await clientWithToken(h);
    // Before the grant no token for acme can even be issued.
    const refused = await request(h.app)
      .post('/mcp/token')
      .auth(late.clientId, late.clientSecret)
      .type('form')
      .send({ grant_type: 'client_credentials', resource: resourceOf(ACME) });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toBe('invalid_target');
    await allowClient(h, { mode: 'hosted', id: 'acme' }, late);
    const token = await tokenAt(h, late, ACME);
    for (const edge of [h.edge, second]) expect((await at(ACME, token, 'ping', {}, edge)).status).toBe(200);
    await h.t.db.deleteFrom('edge_backend_clients').where('client_id', '=', late.clientId).execute();
    for (const edge of [h.edge, second]) {
      await eventually(async () =>
        expectRpcError(await at(ACME, token, 'ping', {}, edge), 421, 'deployment_not_resolved'),
      );
    }
  });
});

describe('the token endpoint issues a token only for a resource the client may use (RFC 8707)', () => {
  const ask = (who: TestClient, resource: string | readonly string[]) =>
    request(h.app)
      .post('/mcp/token')
      .auth(who.clientId, who.clientSecret)
      .type('form')
      .send({ grant_type: 'client_credentials', resource });

  it('the audience is the resource asked for: the base, or a tenant or tunnel host the client may use', async () => {
    for (const resource of [RESOURCE, resourceOf(ACME), `${resourceOf(ACME)}/`, resourceOf(TUNNEL)]) {
      const res = await ask(owner, resource);
      expect(res.status, resource).toBe(200);
      expect(decodeJwt(res.body.access_token).aud).toBe(resource.replace(/\/$/, ''));
    }
    const both = await ask(owner, [resourceOf(ACME), resourceOf(TUNNEL)]);
    expect(decodeJwt(both.body.access_token).aud).toEqual([resourceOf(ACME), resourceOf(TUNNEL)]);
  });

  it('a resource the client may not use reads exactly as one that does not exist', async () => {
    const unknown = await ask(intruder, 'http://nowhere.example.com:4100/mcp');
    expect(unknown.status).toBe(400);
    expect(unknown.body.error).toBe('invalid_target');
    for (const [who, resource] of [
      [intruder, resourceOf(ACME)],
      [intruder, resourceOf(TUNNEL)],
      [intruder, resourceOf('beta.mcp.example.com')],
      [neighbour, resourceOf(ACME)],
      [intruder, [RESOURCE, resourceOf(ACME)]],
      // Not the host's resource: another port, scheme or path, or not a URL at all.
      [owner, 'http://acme.mcp.example.com:9999/mcp'],
      [owner, 'https://acme.mcp.example.com:4100/mcp'],
      [owner, `${BASE.replace('localhost', ACME)}/other`],
      [owner, 'acme.mcp.example.com'],
    ] as const) {
      const res = await ask(who, resource);
      expect({ status: res.status, body: res.body }, String(resource)).toEqual({
        status: unknown.status,
        body: unknown.body,
      });
    }
  });
});

describe("a token is for one host's resource (aud)", () => {
  it('a token for host A is refused on host B, in both directions and across kinds of backend', async () => {
    const acme = await tokenAt(h, owner, ACME);
    const tunnel = await tokenAt(h, owner, TUNNEL);
    const beta = await tokenAt(h, owner, 'beta.mcp.example.com');
    // owner may use every one of these hosts: only the audience is wrong.
    for (const [host, token] of [
      [ACME, owner.token],
      [ACME, tunnel],
      [ACME, beta],
      [TUNNEL, acme],
      [TUNNEL, owner.token],
      ['localhost:4100', acme],
      ['localhost:4100', tunnel],
      // The same tenant under another domain is another resource.
      ['beta.elsewhere.example', beta],
    ] as const) {
      const res = await at(host, token, 'tools/call', { name: 'pkgreg.system.v1.info', arguments: {} });
      expectRpcError(res, 401, 'token_invalid');
      expect(res.body.error.message).toBe('token not issued for this resource');
    }
    expect(forwarded()).toBe(1);
  });
});

describe("a disabled client's tokens stop at once, not at their expiry", () => {
  it('every token, cached or not, on every edge, for every host', async () => {
    const doomed = await clientWithToken(h);
    await allowClient(h, { mode: 'hosted', id: 'acme' }, doomed);
    const cases: Array<[string, string]> = [
      ['localhost:4100', doomed.token],
      ['localhost:4100', await tokenFor(h, doomed)],
      [ACME, await tokenAt(h, doomed, ACME)],
    ];
    // Both edges have verified (and cached) every token.
    for (const edge of [h.edge, second])
      for (const [host, token] of cases) expect((await at(host, token, 'ping', {}, edge)).status).toBe(200);
    expect(await disableClient(h.t.db, doomed.clientId)).toBe(true);
    for (const edge of [h.edge, second]) {
      for (const [host, token] of cases) {
        await eventually(async () => {
          const res = await at(
            host,
            token,
            'tools/call',
            { name: 'pkgreg.system.v1.info', arguments: {} },
            edge,
          );
          expectRpcError(res, 401, 'token_invalid');
          expect(res.body.error.message).toBe('token revoked');
        });
      }
    }
    // Other clients are not touched.
    expect((await at('localhost:4100', owner.token, 'ping', {}, second)).status).toBe(200);
  });
});

describe('the audit record names the backend', () => {
  it('development, hosted:<tenant> or local_tunnel:<session>; a refused stranger is audited with the host it tried', async () => {
    const requests = [
      await at('localhost:4100', owner.token, 'ping'),
      await at(ACME, await tokenAt(h, owner, ACME), 'ping'),
      await at(TUNNEL, await tokenAt(h, owner, TUNNEL), 'tools/call', {
        name: 'pkgreg.memory.v1.search',
        arguments: { namespace: owner.namespace, query: 'owner' },
      }),
      await at(ACME, intruder.token, 'ping'),
      await at('nowhere.example.com', intruder.token, 'ping'),
    ];
    await h.edge.shutdown(); // flushes the audit buffer
    const ids = requests.map((r) => String(r.headers['x-request-id']));
    const rows = await h.t.db
      .selectFrom('audit_records')
      .selectAll()
      .where('request_id', 'in', ids)
      .execute();
    const byId = new Map(rows.map((r) => [r.request_id, r]));
    expect(ids.map((id) => [byId.get(id)?.backend, byId.get(id)?.reason])).toEqual([
      ['development', null],
      ['hosted:acme', null],
      ['local_tunnel:alice-sess', null],
      ['hosted:acme', 'deployment_not_resolved'],
      [null, 'deployment_not_resolved'],
    ]);
  });
});

describe("a trusted issuer's clients: named by namespace, tokens for each host's resource", () => {
  it("a grant by namespace serves that issuer's client only; a grant by client id never another issuer's", async () => {
    const signer = await unknownKey();
    const jwks = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ keys: [signer.publicJwk] }));
    });
    await new Promise<void>((r) => jwks.listen(0, '127.0.0.1', r));
    const issuer = `http://127.0.0.1:${(jwks.address() as AddressInfo).port}`;
    const env = loadEnv({
      ...Object.fromEntries(
        Object.entries(h.env).map(([k, v]) => [k, typeof v === 'string' ? v : undefined]),
      ),
      PKGREG_PUBLIC_BASE_URL: BASE,
      DATABASE_URL: h.t.url,
      EDGE_RATE_LIMIT_PER_MINUTE: '100000',
      PKGREG_PUBLIC_MCP_HOSTED_BINDINGS_JSON: JSON.stringify([
        // `external` by namespace; owner's client id names the edge's own client, whatever its text.
        {
          host: 'ext.mcp.example.com',
          tenant: 'ext',
          clients: [deriveNamespace(issuer, 'external'), owner.clientId],
        },
      ]),
      EDGE_TRUSTED_ISSUERS_JSON: JSON.stringify([
        { issuer, jwksUrl: `${issuer}/jwks`, audience: 'urn:pkgreg:edge' },
      ]),
    });
    const edge = createEdge({ db: h.t.db, redis: h.redis, logger: createLogger('t', 'silent'), env });
    try {
      const now = Math.floor(Date.now() / 1000);
      const sign = (subject: string, aud: string) =>
        new SignJWT({ scope: 'pkgreg.system.read' })
          .setProtectedHeader({ alg: 'ES256', kid: signer.kid })
          .setIssuer(issuer)
          .setAudience(aud)
          .setSubject(subject)
          .setIssuedAt(now)
          .setExpirationTime(now + 60)
          .sign(signer.key);
      const ping = async (host: string, token: string) =>
        rpc(edge, token, 'ping', {}, { headers: { Host: host } });
      const EXT = 'ext.mcp.example.com';
      // Its configured audience is the base's resource: development only.
      expect((await ping('localhost:4100', await sign('external', 'urn:pkgreg:edge'))).status).toBe(200);
      expectRpcError(await ping(EXT, await sign('external', 'urn:pkgreg:edge')), 401, 'token_invalid');
      // The tenant's host needs a token for its resource.
      expect((await ping(EXT, await sign('external', resourceOf(EXT)))).status).toBe(200);
      // Another client of that issuer, and one whose subject is the text of owner's client id: not served.
      for (const subject of ['someone-else', owner.clientId]) {
        expect(shape(await ping(EXT, await sign(subject, resourceOf(EXT))))).toEqual(
          shape(await ping('nowhere.example.com', await sign(subject, resourceOf(EXT)))),
        );
      }
      // owner itself (the edge's own client of that id) is.
      expect((await ping(EXT, await tokenAt(edge, owner, EXT))).status).toBe(200);
    } finally {
      await edge.shutdown();
      await new Promise<void>((r) => jwks.close(() => r()));
    }
  });
});
