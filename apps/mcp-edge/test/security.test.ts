import { ALL_SCOPES, deriveDelegatedNamespace, SCOPES } from '@pkgreg/contracts';
import { sql } from 'kysely';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  clientWithToken,
  eventually,
  expectRpcError,
  forgeToken,
  ISSUER,
  PRM_URL,
  rpc,
  type TestClient,
  unknownKey,
  unsignedToken,
  useHarness,
} from './helpers.js';

// STYLE.md §14: the security battery runs for EVERY JSON-RPC method and EVERY tool.
// mcp-edge.md, Authentication 1-6; decisions.md, admission order and wire form (401, 403, 200 rows).

const h = useHarness();
let owner: TestClient;
let other: TestClient;
let ownEntryId: string;
let otherEntryId: string;
let otherTaskId: string;
let ownTaskId: string;

beforeAll(async () => {
  owner = await clientWithToken(h);
  other = await clientWithToken(h);
  const put = async (c: TestClient) =>
    (
      await rpc(h, c.token, 'tools/call', {
        name: 'pkgreg.memory.v1.put',
        arguments: { namespace: c.namespace, tier: 'stm', content: 'battery entry' },
      })
    ).body.result.entry.entryId as string;
  ownEntryId = await put(owner);
  otherEntryId = await put(other);
  const task = async (c: TestClient) =>
    (
      await rpc(h, c.token, 'tools/call', {
        name: 'pkgreg.agents.v1.invoke',
        arguments: {
          agentId: 'engineering.workflow',
          input: { type: 'text', text: 'plan' },
          executionMode: 'async',
        },
      })
    ).body.result.task.taskId as string;
  ownTaskId = await task(owner);
  otherTaskId = await task(other);
});

interface Target {
  label: string;
  method: string;
  params: (c: TestClient) => Record<string, unknown>;
  /** Scopes a token may hold and still be refused for this call (undefined: the method needs none). */
  lacking?: string[];
  /** Arguments naming another subject's namespace. */
  otherNamespace?: () => Record<string, unknown>;
}

const tool = (name: string, args: (c: TestClient) => Record<string, unknown>) => (c: TestClient) => ({
  name,
  arguments: args(c),
});

const targets: Target[] = [
  {
    label: 'initialize',
    method: 'initialize',
    params: () => ({ protocolVersion: '2025-11-25', clientInfo: { name: 'battery', version: '1' } }),
  },
  { label: 'ping', method: 'ping', params: () => ({}) },
  { label: 'tools/list', method: 'tools/list', params: () => ({}) },
  { label: 'tasks/get', method: 'tasks/get', params: () => ({ taskId: ownTaskId }) },
  { label: 'tasks/result', method: 'tasks/result', params: () => ({ taskId: ownTaskId }) },
  {
    label: 'pkgreg.memory.v1.put',
    method: 'tools/call',
    params: tool('pkgreg.memory.v1.put', (c) => ({ namespace: c.namespace, tier: 'ltm', content: 'x' })),
    lacking: ALL_SCOPES.filter((s) => s !== SCOPES.ltmWrite),
    otherNamespace: () =>
      tool('pkgreg.memory.v1.put', () => ({ namespace: other.namespace, tier: 'stm', content: 'x' }))(owner),
  },
  {
    label: 'pkgreg.memory.v1.get',
    method: 'tools/call',
    params: tool('pkgreg.memory.v1.get', (c) => ({ namespace: c.namespace, entryId: ownEntryId })),
    lacking: ALL_SCOPES.filter((s) => s !== SCOPES.stmRead),
    otherNamespace: () =>
      tool('pkgreg.memory.v1.get', () => ({ namespace: other.namespace, entryId: otherEntryId }))(owner),
  },
  {
    label: 'pkgreg.memory.v1.search',
    method: 'tools/call',
    params: tool('pkgreg.memory.v1.search', (c) => ({
      namespace: c.namespace,
      query: 'battery',
      tiers: ['stm'],
    })),
    lacking: ALL_SCOPES.filter((s) => s !== SCOPES.stmRead),
    otherNamespace: () =>
      tool('pkgreg.memory.v1.search', () => ({ namespace: other.namespace, query: 'battery' }))(owner),
  },
  {
    label: 'pkgreg.memory.v1.delete',
    method: 'tools/call',
    params: tool('pkgreg.memory.v1.delete', (c) => ({ namespace: c.namespace, entryId: ownEntryId })),
    lacking: ALL_SCOPES.filter((s) => s !== SCOPES.stmDelete),
    otherNamespace: () =>
      tool('pkgreg.memory.v1.delete', () => ({ namespace: other.namespace, entryId: otherEntryId }))(owner),
  },
  {
    label: 'pkgreg.memory.v1.compact',
    method: 'tools/call',
    params: tool('pkgreg.memory.v1.compact', (c) => ({
      namespace: c.namespace,
      strategy: 'summarize',
      executionMode: 'async',
    })),
    lacking: ALL_SCOPES.filter((s) => s !== SCOPES.stmWrite),
    otherNamespace: () =>
      tool('pkgreg.memory.v1.compact', () => ({ namespace: other.namespace, strategy: 'summarize' }))(owner),
  },
  {
    label: 'pkgreg.agents.v1.list',
    method: 'tools/call',
    params: tool('pkgreg.agents.v1.list', () => ({})),
    lacking: ALL_SCOPES.filter((s) => s !== SCOPES.systemRead),
  },
  {
    label: 'pkgreg.agents.v1.invoke',
    method: 'tools/call',
    params: tool('pkgreg.agents.v1.invoke', (c) => ({
      agentId: 'engineering.workflow',
      input: { type: 'text', text: 'plan' },
      executionMode: 'async',
      memory: { namespace: c.namespace, readTiers: ['ltm'], writeTiers: ['stm'] },
    })),
    lacking: ALL_SCOPES.filter((s) => s !== SCOPES.agentsInvoke),
    otherNamespace: () =>
      tool('pkgreg.agents.v1.invoke', () => ({
        agentId: 'engineering.workflow',
        input: { type: 'text', text: 'plan' },
        executionMode: 'async',
        memory: { namespace: other.namespace, readTiers: ['ltm'], writeTiers: [] },
      }))(owner),
  },
  {
    label: 'pkgreg.system.v1.info',
    method: 'tools/call',
    params: tool('pkgreg.system.v1.info', () => ({})),
    lacking: ALL_SCOPES.filter((s) => s !== SCOPES.systemRead),
  },
];

function expectUnauthorized(res: Awaited<ReturnType<typeof rpc>>, missing = false) {
  expectRpcError(res, 401, 'token_invalid');
  const challenge = String(res.headers['www-authenticate']);
  expect(challenge).toContain(`resource_metadata="${PRM_URL}"`);
  expect(challenge.startsWith('Bearer ')).toBe(true);
  if (missing) expect(challenge).not.toContain('error=');
  else expect(challenge).toContain('error="invalid_token"');
}

describe.each(targets)('security battery: $label', (target) => {
  it('happy path: a valid token with the right scopes is admitted (so every refusal below is real)', async () => {
    const res = await rpc(h, owner.token, target.method, target.params(owner));
    expect(res.status).toBe(200);
    // tasks/result of a queued task is task_not_ready: admitted, then refused by the task itself.
    if (target.method === 'tasks/result') expect(res.body.error.data.reason).toBe('task_not_ready');
    else expect(res.body.result).toBeDefined();
  });

  it('no token → 401 with a bare Bearer challenge naming the resource metadata', async () => {
    expectUnauthorized(await rpc(h, undefined, target.method, target.params(owner)), true);
  });

  it('malformed token → 401', async () => {
    expectUnauthorized(await rpc(h, 'not-a-jwt', target.method, target.params(owner)));
    expectUnauthorized(await rpc(h, 'a.b.c', target.method, target.params(owner)));
  });

  it('expired token → 401', async () => {
    const t = await forgeToken(h, { expSecondsFromNow: -60, clientId: owner.clientId });
    expectUnauthorized(await rpc(h, t, target.method, target.params(owner)));
  });

  it('wrong audience → 401', async () => {
    const t = await forgeToken(h, { aud: 'https://other.example/mcp', clientId: owner.clientId });
    expectUnauthorized(await rpc(h, t, target.method, target.params(owner)));
  });

  it('wrong issuer → 401', async () => {
    const t = await forgeToken(h, { iss: 'https://evil.example/mcp', clientId: owner.clientId });
    expectUnauthorized(await rpc(h, t, target.method, target.params(owner)));
  });

  it('alg none → 401', async () => {
    expectUnauthorized(await rpc(h, unsignedToken(), target.method, target.params(owner)));
  });

  it('token signed by a key the edge never published → 401', async () => {
    const t = await forgeToken(h, { key: await unknownKey(), clientId: owner.clientId });
    expectUnauthorized(await rpc(h, t, target.method, target.params(owner)));
  });

  if (target.lacking)
    it('missing scope → 403 insufficient_scope naming the scope', async () => {
      const t = await forgeToken(h, { scope: (target.lacking ?? []).join(' '), clientId: owner.clientId });
      const res = await rpc(h, t, target.method, target.params(owner));
      expectRpcError(res, 403, 'scope_insufficient');
      expect(res.headers['www-authenticate']).toMatch(/^Bearer error="insufficient_scope", scope="pkgreg\./);
    });

  if (target.otherNamespace)
    it('another namespace → namespace_unauthorized (200)', async () => {
      const res = await rpc(
        h,
        owner.token,
        target.method,
        (target.otherNamespace as () => Record<string, unknown>)(),
      );
      expectRpcError(res, 200, 'namespace_unauthorized');
      expect(res.body.error.code).toBe(-32004);
    });

  if (target.method.startsWith('tasks/'))
    it("another subject's task → task_not_found", async () => {
      const res = await rpc(h, owner.token, target.method, { taskId: otherTaskId });
      expectRpcError(res, 200, 'task_not_found');
      expect(res.body.error.code).toBe(-32602);
    });

  if (target.label === 'pkgreg.memory.v1.get' || target.label === 'pkgreg.memory.v1.delete')
    it("another subject's entry id under the caller's own namespace is not found", async () => {
      const name = target.label;
      const res = await rpc(h, owner.token, 'tools/call', {
        name,
        arguments: { namespace: owner.namespace, entryId: otherEntryId },
      });
      expect(res.body.error.data.reason).toBe('request_schema_invalid');
      const still = await rpc(h, other.token, 'tools/call', {
        name: 'pkgreg.memory.v1.get',
        arguments: { namespace: other.namespace, entryId: otherEntryId },
      });
      expect(still.body.result.entry.status).toBe('active');
    });
});

describe('delegated tokens: a person using a client (issue 29)', () => {
  const put = (token: string, namespace: string) =>
    rpc(h, token, 'tools/call', {
      name: 'pkgreg.memory.v1.put',
      arguments: { namespace, tier: 'stm', content: 'delegated entry' },
    });

  it("a token of the edge's own issuer without typ at+jwt is refused (RFC 9068)", async () => {
    expectUnauthorized(
      await rpc(h, await forgeToken(h, { clientId: owner.clientId, typ: null }), 'tools/call', {
        name: 'pkgreg.system.v1.info',
        arguments: {},
      }),
    );
    const jwt = await forgeToken(h, { clientId: owner.clientId, typ: 'JWT' });
    expectUnauthorized(await rpc(h, jwt, 'tools/call', { name: 'pkgreg.system.v1.info', arguments: {} }));
  });

  it('its namespace is derived from issuer, client and person: apart from the client and from other people', async () => {
    const mine = deriveDelegatedNamespace(ISSUER, owner.clientId, 'acct_1');
    const token = await forgeToken(h, { clientId: owner.clientId, subject: 'acct_1' });
    const res = await put(token, mine);
    expect(res.status).toBe(200);
    expect(res.body.result.entry.namespace).toBe(mine);
    // Neither the client's own namespace nor another person's through the same client.
    expectRpcError(await put(token, owner.namespace), 200, 'namespace_unauthorized');
    expectRpcError(
      await put(token, deriveDelegatedNamespace(ISSUER, owner.clientId, 'acct_2')),
      200,
      'namespace_unauthorized',
    );
    // The client acting for itself does not reach the person's memory either.
    expectRpcError(await put(owner.token, mine), 200, 'namespace_unauthorized');
  });

  it("a person revoking the app stops the app's tokens for them within the bound, and only those", async () => {
    const info = (token: string) =>
      rpc(h, token, 'tools/call', { name: 'pkgreg.system.v1.info', arguments: {} });
    await sql`insert into auth_user ("id", "name", "email", "emailVerified", "createdAt", "updatedAt")
      values ('acct_rev', 'r', 'r@example.com', true, now(), now()), ('acct_kept', 'k', 'k@example.com', true, now(), now())
      on conflict do nothing`.execute(h.t.db);
    const before = await forgeToken(h, { clientId: owner.clientId, subject: 'acct_rev' });
    const otherPerson = await forgeToken(h, { clientId: owner.clientId, subject: 'acct_kept' });
    expect((await info(before)).status).toBe(200);
    // As every revocation writes it: revoked, and no token issued before now counts (tokens_not_before).
    await sql`insert into edge_delegations (account_id, client_id, scopes, revoked_at, tokens_not_before)
      values ('acct_rev', ${owner.clientId}, '{}', now(), now())`.execute(h.t.db);
    // Within EDGE_ACCESS_MAX_AGE_MS (100 ms), on every edge.
    await eventually(async () => {
      const res = await info(before);
      expectUnauthorized(res);
      expect(res.body.error.message).toMatch(/revoked/);
    });
    // Another person using the app, and the app acting for itself, are untouched.
    expect((await info(otherPerson)).status).toBe(200);
    expect((await info(owner.token)).status).toBe(200);
    // A token issued after the revocation (the person allowed the app again) is admitted.
    const after = await forgeToken(h, {
      clientId: owner.clientId,
      subject: 'acct_rev',
      issuedAt: Math.floor(Date.now() / 1000) + 2,
    });
    expect((await info(after)).status).toBe(200);
  });
});

describe('binding-derived scopes (mcp-edge.md, Authentication 4)', () => {
  it('invoke with a memory binding needs the tier scopes as well as pkgreg.agents.invoke', async () => {
    const t = await forgeToken(h, { scope: SCOPES.agentsInvoke, clientId: owner.clientId });
    const res = await rpc(h, t, 'tools/call', {
      name: 'pkgreg.agents.v1.invoke',
      arguments: {
        agentId: 'engineering.workflow',
        input: { type: 'text', text: 'plan' },
        executionMode: 'async',
        memory: { namespace: owner.namespace, readTiers: ['ltm'], writeTiers: ['stm'] },
      },
    });
    expectRpcError(res, 403, 'scope_insufficient');
    expect(res.body.error.data.requiredScopes).toEqual([SCOPES.ltmRead, SCOPES.stmWrite]);
    expect(res.headers['www-authenticate']).toContain(`scope="${SCOPES.ltmRead} ${SCOPES.stmWrite}"`);
  });
});
