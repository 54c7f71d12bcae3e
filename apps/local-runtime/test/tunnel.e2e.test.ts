import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { LookupFunction } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ALL_SCOPES } from '@pkgreg/contracts';
import { createTestDatabase, TEST_REDIS_URL, type TestDatabase, testKeyPrefix } from '@pkgreg/db/testing';
import { bodySha256, ENVELOPE_HEADER, signEnvelope } from '@pkgreg/runtime';
import { freePort } from '@pkgreg/testing';
import { SignJWT } from 'jose';
import { Agent, fetch as undiciFetch } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Proc, start } from './processes.js';

// The local_tunnel backend end to end, across processes: the built edge (real Postgres and Redis) and two
// built local runtimes (`pkgreg-runtime local`, each on its own embedded PGlite store), sessions made by the
// operator command `tunnels:create`, and the official MCP SDK client calling the edge. Nothing of ours is
// mocked: every call below crosses the edge's admission, the tunnel's WebSocket and the runtime's envelope
// checks.

const require = createRequire(import.meta.url);
const EDGE_DIR = dirname(require.resolve('@pkgreg/mcp-edge/package.json'));
const RUNTIME = new URL('../dist/index.js', import.meta.url).pathname;
const TUNNEL_TIMEOUT_MS = 10_000;

// biome-ignore lint/suspicious/noExplicitAny: response bodies are read field by field by the assertions.
type Json = Record<string, any>;

interface Session {
  sessionId: string;
  secret: string;
}

let db: TestDatabase;
let port: number;
let edgeEnv: Record<string, string>;
let edge: Proc;
const runtimes: Record<'alice' | 'bob', Proc | undefined> = { alice: undefined, bob: undefined };
const sessions: Record<'alice' | 'bob', Session> = {} as never;
const dataDirs: Record<'alice' | 'bob', string> = {} as never;
/** The client's token for each session's host: a token is for one host's resource (issue 26). */
const tokens: Record<'alice' | 'bob', string> = {} as never;
/** The client both sessions serve (tunnels:create --client). */
let client: { clientId: string; clientSecret: string };
let namespace: string;
/** The HTTP receiver of alice's runtime (it also listens, for the envelope checks). */
let aliceReceiver: string;

/** Every name resolves to this machine: `alice.tunnel.test` reaches the edge with that Host. */
const lookup: LookupFunction = (_host, options, callback) => {
  if (options.all) callback(null, [{ address: '127.0.0.1', family: 4 }]);
  else callback(null, '127.0.0.1', 4);
};
const dispatcher = new Agent({ connect: { lookup } });
const loopbackFetch = (url: string | URL, init?: RequestInit) =>
  undiciFetch(url, { ...(init as object), dispatcher }) as unknown as Promise<Response>;

function edgeCli(args: string[], env: Record<string, string> = {}): string {
  const result = spawnSync(process.execPath, [join(EDGE_DIR, 'dist/cli.js'), ...args], {
    env: { PATH: process.env.PATH ?? '', ...edgeEnv, ...env },
    encoding: 'utf8',
  });
  if (result.status !== 0) throw new Error(`edge ${args[0]} failed: ${result.stderr}`);
  return result.stdout;
}

/** `tunnels:create`'s output: the session's credentials and the sessions setting that adds it. */
function createSession(handle: string, existing: string): { session: Session; setting: string } {
  const out = edgeCli(['tunnels:create', '--handle', handle, '--client', client.clientId], {
    PKGREG_PUBLIC_MCP_TUNNEL_SESSIONS_JSON: existing,
  });
  // The runtime's command names the clients the session serves: the runtime checks them itself.
  expect(out).toContain(`PKGREG_TUNNEL_CLIENTS=${client.clientId} `);
  const setting = /PKGREG_PUBLIC_MCP_TUNNEL_SESSIONS_JSON='(.+)'/.exec(out)?.[1];
  const sessionId = /PKGREG_TUNNEL_SESSION_ID=(\S+)/.exec(out)?.[1];
  const secret = /PKGREG_TUNNEL_SECRET=(\S+)/.exec(out)?.[1];
  if (!setting || !sessionId || !secret) throw new Error(`unexpected tunnels:create output:\n${out}`);
  return { session: { sessionId, secret }, setting };
}

function startEdge(): Proc {
  return start(join(EDGE_DIR, 'dist/index.js'), [], edgeEnv);
}

function startRuntime(name: 'alice' | 'bob', extra: string[] = [], clients = client.clientId): Proc {
  const { sessionId, secret } = sessions[name];
  return start(
    RUNTIME,
    [
      'local',
      '--edge',
      `http://127.0.0.1:${port}`,
      '--session-id',
      sessionId,
      '--data-dir',
      dataDirs[name],
      ...extra,
    ],
    {
      PKGREG_TUNNEL_SECRET: secret,
      PKGREG_TUNNEL_CLIENTS: clients,
      PKGREG_TUNNEL_HEARTBEAT_MS: '1000',
      PKGREG_TUNNEL_HEARTBEAT_TIMEOUT_MS: '2000',
      PKGREG_TUNNEL_RECONNECT_MIN_MS: '200',
      PKGREG_TUNNEL_RECONNECT_MAX_MS: '1000',
      PKGREG_SYNC_THRESHOLD_MS: '5000',
      // No registry here: the agent's plans name no packages (decisions.md: the registry being down).
      PKGREG_REGISTRY: 'http://127.0.0.1:9',
      PKGREG_REGISTRY_TIMEOUT_MS: '200',
      LOG_LEVEL: 'info',
    },
  );
}

const hostOf = (name: 'alice' | 'bob') => `${name}.tunnel.test:${port}`;

async function mcp(name: 'alice' | 'bob'): Promise<Client> {
  const transport = new StreamableHTTPClientTransport(new URL(`http://${hostOf(name)}/mcp`), {
    fetch: loopbackFetch,
    requestInit: { headers: { Authorization: `Bearer ${tokens[name]}` } },
  });
  const client = new Client({ name: `e2e-${name}`, version: '1.0.0' });
  await client.connect(transport);
  return client;
}

/** A plain JSON-RPC call, for the exact wire form of refusals. */
async function rpc(
  name: 'alice' | 'bob',
  method: string,
  params: Record<string, unknown>,
  token: string = tokens[name],
) {
  const res = await loopbackFetch(`http://${hostOf(name)}/mcp`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2025-11-25',
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  return { status: res.status, body: (await res.json()) as Json };
}

/** A token of `who` for the host of `name`'s session (RFC 8707 resource: that host's MCP URL). */
async function tokenFor(who: { clientId: string; clientSecret: string }, name: 'alice' | 'bob') {
  const res = await fetch(`http://127.0.0.1:${port}/mcp/token`, {
    method: 'POST',
    headers: {
      authorization: `Basic ${Buffer.from(`${who.clientId}:${who.clientSecret}`).toString('base64')}`,
      'content-type': 'application/x-www-form-urlencoded',
    },
    body: new URLSearchParams({ grant_type: 'client_credentials', resource: `http://${hostOf(name)}/mcp` }),
  });
  const body = (await res.json()) as { access_token?: string };
  if (!body.access_token) throw new Error(`no token: ${res.status} ${JSON.stringify(body)}`);
  return body.access_token;
}

const structured = (result: unknown) => (result as { structuredContent: Json }).structuredContent;

async function put(client: Client, content: string): Promise<string> {
  const result = await client.callTool({
    name: 'pkgreg.memory.v1.put',
    arguments: { namespace, tier: 'stm', content, tags: ['e2e'] },
  });
  return structured(result).entry.entryId as string;
}

async function search(client: Client, query: string): Promise<string[]> {
  const result = await client.callTool({ name: 'pkgreg.memory.v1.search', arguments: { namespace, query } });
  return (structured(result).results as { entry: { content: string } }[]).map((r) => r.entry.content);
}

/** A forwarded call as the edge signs it, sent to alice's HTTP receiver. */
async function sendToReceiver(envelope: string, body: string) {
  const res = await fetch(aliceReceiver, {
    method: 'POST',
    headers: { 'content-type': 'application/json', [ENVELOPE_HEADER]: envelope },
    body,
  });
  return { status: res.status, body: (await res.json()) as Json };
}

/** A memory search as the edge forwards it, for alice's receiver. */
const searchCall = () =>
  JSON.stringify({
    method: 'tools/call',
    name: 'pkgreg.memory.v1.search',
    args: { namespace, query: 'deploy' },
    caller: { namespace, clientId: client.clientId, scopes: ['pkgreg.memory.stm.read'] },
  });

beforeAll(async () => {
  db = await createTestDatabase();
  port = await freePort();
  edgeEnv = {
    DATABASE_URL: db.url,
    REDIS_URL: TEST_REDIS_URL,
    EDGE_HOST: '127.0.0.1',
    EDGE_PORT: String(port),
    PKGREG_PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
    EDGE_QUEUE_PREFIX: testKeyPrefix('e2e-q'),
    REDIS_KEY_PREFIX: `${testKeyPrefix('e2e-keys')}:`,
    EDGE_TUNNEL_TIMEOUT_MS: String(TUNNEL_TIMEOUT_MS),
    EDGE_TUNNEL_HEARTBEAT_MS: '1000',
    LOG_LEVEL: 'info',
  };
  client = JSON.parse(edgeCli(['clients:create', '--name', 'e2e', '--scopes', ALL_SCOPES.join(' ')])) as {
    clientId: string;
    clientSecret: string;
  };
  const alice = createSession('alice', '[]');
  const bob = createSession('bob', alice.setting);
  sessions.alice = alice.session;
  sessions.bob = bob.session;
  edgeEnv.PKGREG_PUBLIC_MCP_TUNNEL_SESSIONS_JSON = bob.setting;
  expect(JSON.parse(bob.setting)).toHaveLength(2);

  edge = startEdge();
  await edge.waitFor('mcp-edge listening');
  for (const name of ['alice', 'bob'] as const) tokens[name] = await tokenFor(client, name);
  // decisions.md, Namespace: app: + sha256 of `<issuer>|<client_id>`.
  const issuer = `http://127.0.0.1:${port}/mcp`;
  namespace = `app:${createHash('sha256').update(`${issuer}|${client.clientId}`).digest('hex')}`;

  for (const name of ['alice', 'bob'] as const)
    dataDirs[name] = mkdtempSync(join(tmpdir(), `pkgreg-rt-${name}-`));
  runtimes.alice = startRuntime('alice', ['--port', '0']);
  runtimes.bob = startRuntime('bob');
  const started = await runtimes.alice.waitFor('local runtime started', 120_000);
  aliceReceiver = started.receiver as string;
  await Promise.all([
    runtimes.alice.waitFor('tunnel connected'),
    runtimes.bob.waitFor('tunnel connected', 120_000),
  ]);
});

afterAll(async () => {
  await Promise.all([runtimes.alice?.stop(), runtimes.bob?.stop()]);
  await edge?.stop();
  for (const dir of Object.values(dataDirs)) if (dir) rmSync(dir, { recursive: true, force: true });
  await dispatcher.close();
  await db?.destroy();
});

describe('calls through the tunnel (the WebSocket the local runtime dialed out)', () => {
  it('an MCP SDK client initializes at a tunnel host and runs memory tools on the local runtime', async () => {
    const client = await mcp('alice');
    try {
      expect(client.getServerVersion()?.name).toBe('pkgreg-mcp-edge');
      const { tools } = await client.listTools();
      expect(tools).toHaveLength(10);
      const info = structured(await client.callTool({ name: 'pkgreg.system.v1.info', arguments: {} }));
      expect(info.server.backendMode).toBe('local_tunnel');

      const entryId = await put(client, 'alice keeps her deploy notes on her laptop');
      expect(await search(client, 'deploy notes')).toEqual(['alice keeps her deploy notes on her laptop']);
      const got = structured(
        await client.callTool({ name: 'pkgreg.memory.v1.get', arguments: { namespace, entryId } }),
      );
      expect(got.entry.content).toBe('alice keeps her deploy notes on her laptop');
    } finally {
      await client.close();
    }
    // The edge's own database never saw the entry: it was stored by the local runtime.
    const atEdge = await db.db
      .selectFrom('memory_entries')
      .select('entry_id')
      .where('namespace', '=', namespace)
      .execute();
    expect(atEdge).toHaveLength(0);
  });

  it('agent invokes and compactions run as tasks in the process of the local runtime', async () => {
    const client = await mcp('alice');
    try {
      const invoked = structured(
        await client.callTool({
          name: 'pkgreg.agents.v1.invoke',
          arguments: {
            agentId: 'engineering.workflow',
            input: { type: 'text', text: 'Design the schema, then write the migration and test it' },
            memory: { namespace, readTiers: [], writeTiers: ['stm'] },
            executionMode: 'sync',
          },
        }),
      );
      expect(invoked.mode).toBe('completed');
      expect(invoked.outputs.length).toBeGreaterThan(0);

      await put(client, 'The payment service retries failed charges three times.');
      const accepted = structured(
        await client.callTool({
          name: 'pkgreg.memory.v1.compact',
          arguments: {
            namespace,
            sourceTier: 'stm',
            strategy: 'summarize',
            maxEntries: 20,
            executionMode: 'async',
          },
        }),
      );
      expect(accepted.mode).toBe('task');
      const { taskId } = accepted.task as { taskId: string };
      let status = '';
      for (let i = 0; i < 100 && status !== 'completed'; i += 1) {
        const got = await rpc('alice', 'tasks/get', { taskId });
        status = got.body.result.status;
        if (status !== 'completed') await new Promise((r) => setTimeout(r, 100));
      }
      expect(status).toBe('completed');
      const result = await rpc('alice', 'tasks/result', { taskId });
      expect(result.body.result.status).toBe('completed');
      expect(result.body.result.result.outputs.length).toBeGreaterThan(0);
      // The task lives in alice's runtime only: bob's runtime does not know it.
      const other = await rpc('bob', 'tasks/get', { taskId });
      expect(other.body.error.data.reason).toBe('task_not_found');
    } finally {
      await client.close();
    }
  });
});

describe('two sessions never see the data of the other', () => {
  it('the same caller reads only what the runtime of each session stored', async () => {
    const alice = await mcp('alice');
    const bob = await mcp('bob');
    try {
      const aliceEntry = await put(alice, 'only alice has the staging password rotation runbook');
      await put(bob, 'only bob has the incident review checklist');
      expect(await search(alice, 'runbook checklist')).toContain(
        'only alice has the staging password rotation runbook',
      );
      expect(await search(alice, 'runbook checklist')).not.toContain(
        'only bob has the incident review checklist',
      );
      expect(await search(bob, 'runbook checklist')).toEqual(['only bob has the incident review checklist']);
      const fromBob = await rpc('bob', 'tools/call', {
        name: 'pkgreg.memory.v1.get',
        arguments: { namespace, entryId: aliceEntry },
      });
      expect(fromBob.body.error.data.reason).toBe('request_schema_invalid');
      expect(fromBob.body.error.message).toBe('entry not found');
    } finally {
      await Promise.all([alice.close(), bob.close()]);
    }
  });
});

describe('the runtime checks every envelope (decisions.md, Tunnel envelope)', () => {
  it('an envelope is used once: its replay is tunnel_replay_detected', async () => {
    const body = searchCall();
    const envelope = await signEnvelope({ ...sessions.alice, namespace, body });
    const first = await sendToReceiver(envelope, body);
    expect(first.status).toBe(200);
    expect(first.body.result.results).toBeInstanceOf(Array);
    const replay = await sendToReceiver(envelope, body);
    expect(replay.status).toBe(409);
    expect(replay.body.error.reason).toBe('tunnel_replay_detected');
  });

  it('an expired envelope, a bad signature, another session and a changed body are tunnel_envelope_invalid', async () => {
    const body = searchCall();
    const now = Math.floor(Date.now() / 1000);
    const expired = await new SignJWT({ sid: sessions.alice.sessionId, bodySha256: bodySha256(body) })
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject(namespace)
      .setJti(crypto.randomUUID())
      .setIssuedAt(now - 90)
      .setExpirationTime(now - 30)
      .sign(new TextEncoder().encode(sessions.alice.secret));
    const refusals = [
      await sendToReceiver(expired, body),
      await sendToReceiver(await signEnvelope({ ...sessions.bob, namespace, body }), body),
      await sendToReceiver(
        await signEnvelope({ sessionId: sessions.alice.sessionId, secret: 'x'.repeat(43), namespace, body }),
        body,
      ),
      await sendToReceiver(
        await signEnvelope({ ...sessions.alice, namespace, body }),
        body.replace('deploy', 'laptop'),
      ),
    ];
    for (const res of refusals) {
      expect(res.status).toBe(401);
      expect(res.body.error.reason).toBe('tunnel_envelope_invalid');
    }
  });
});

describe('the runtime serves only the clients its user named, whatever the edge admits (issue 26)', () => {
  it('a client the operator allowed at the edge but the runtime does not serve is refused by the runtime', async () => {
    const stranger = JSON.parse(
      edgeCli(['clients:create', '--name', 'stranger', '--scopes', ALL_SCOPES.join(' ')]),
    ) as { clientId: string; clientSecret: string };
    const strangerNs = `app:${createHash('sha256').update(`http://127.0.0.1:${port}/mcp|${stranger.clientId}`).digest('hex')}`;
    // Not allowed anywhere yet: no token for the session's host, and refused as an unknown host.
    await expect(tokenFor(stranger, 'alice')).rejects.toThrow(/invalid_target/);
    edgeCli(['tunnels:allow', sessions.alice.sessionId, stranger.clientId]);
    expect(edgeCli(['tunnels:clients', sessions.alice.sessionId])).toContain(stranger.clientId);
    const token = await tokenFor(stranger, 'alice');
    // The edge admits and forwards; alice's runtime (serving only the e2e client) refuses each call.
    for (const [method, params] of [
      [
        'tools/call',
        {
          name: 'pkgreg.memory.v1.put',
          arguments: { namespace: strangerNs, tier: 'stm', content: 'not here' },
        },
      ],
      ['tools/call', { name: 'pkgreg.memory.v1.search', arguments: { namespace: strangerNs, query: 'x' } }],
      ['tasks/get', { taskId: '00000000-0000-4000-8000-000000000000' }],
    ] as const) {
      const res = await rpc('alice', method, params, token);
      expect(res.status).toBe(200);
      expect(res.body.error.code).toBe(-32012);
      expect(res.body.error.data.reason).toBe('tunnel_envelope_invalid');
      expect(res.body.error.message).toBe('the local runtime does not serve this client');
    }
    // bob's session was not opened to it: refused at the edge as an unknown host.
    const bobToken = await tokenFor(client, 'bob');
    expect((await rpc('bob', 'ping', {}, bobToken)).status).toBe(200);
    const atBob = await rpc('bob', 'ping', {}, token);
    expect(atBob.status).toBe(421);
    expect(atBob.body.error.data.reason).toBe('deployment_not_resolved');
    // A forwarded call signed with the session's secret for the stranger, straight to the receiver.
    const body = JSON.stringify({
      method: 'tools/call',
      name: 'pkgreg.memory.v1.search',
      args: { namespace: strangerNs, query: 'deploy' },
      caller: { namespace: strangerNs, clientId: stranger.clientId, scopes: ['pkgreg.memory.stm.read'] },
    });
    const direct = await sendToReceiver(
      await signEnvelope({ ...sessions.alice, namespace: strangerNs, body }),
      body,
    );
    expect(direct.status).toBe(403);
    expect(direct.body.error.reason).toBe('tunnel_envelope_invalid');
    // Revoked at the edge: refused there within EDGE_ACCESS_MAX_AGE_MS (100 ms), as an unknown host.
    edgeCli(['tunnels:revoke', sessions.alice.sessionId, stranger.clientId]);
    const deadline = Date.now() + 2_000;
    let revoked = await rpc('alice', 'ping', {}, token);
    while (revoked.status !== 421 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      revoked = await rpc('alice', 'ping', {}, token);
    }
    expect(revoked.status).toBe(421);
    expect(revoked.body.error.data.reason).toBe('deployment_not_resolved');
  });
});

describe('a killed local runtime', () => {
  it('callers get tunnel_unavailable at once while it is down; the restarted runtime reconnects and serves its data', async () => {
    const client = await mcp('alice');
    const entryId = await put(client, 'written before the crash');
    await client.close();
    // An envelope consumed before the crash, still within its lifetime after the restart.
    const body = searchCall();
    const envelope = await signEnvelope({ ...sessions.alice, namespace, body, lifetimeSeconds: 60 });
    expect((await sendToReceiver(envelope, body)).status).toBe(200);

    await runtimes.alice?.kill();
    const down = await rpc('alice', 'tools/call', {
      name: 'pkgreg.memory.v1.get',
      arguments: { namespace, entryId },
    });
    // At once, not after the tunnel timeout: that one answers 504.
    expect(down.status).toBe(503);
    expect(down.body.error.code).toBe(-32014);
    expect(down.body.error.data.reason).toBe('tunnel_unavailable');
    expect(down.body.error.data.requestId).toBeTruthy();
    // An SDK client sees the refusal too, not a hang.
    const sdk = await mcp('alice');
    await expect(
      sdk.callTool({ name: 'pkgreg.memory.v1.get', arguments: { namespace, entryId } }),
    ).rejects.toThrow(/503|tunnel_unavailable/);
    await sdk.close();
    // bob's session is not affected.
    const bob = await mcp('bob');
    expect(await search(bob, 'checklist')).toEqual(['only bob has the incident review checklist']);
    await bob.close();

    runtimes.alice = startRuntime('alice', ['--port', '0']);
    const restarted = await runtimes.alice.waitFor('local runtime started', 60_000);
    aliceReceiver = restarted.receiver as string;
    await runtimes.alice.waitFor('tunnel connected');
    const again = await mcp('alice');
    try {
      const got = structured(
        await again.callTool({ name: 'pkgreg.memory.v1.get', arguments: { namespace, entryId } }),
      );
      expect(got.entry.content).toBe('written before the crash');
    } finally {
      await again.close();
    }
    // The nonce outlived the crash: the envelope is still refused as a replay.
    const replay = await sendToReceiver(envelope, body);
    expect(replay.status).toBe(409);
    expect(replay.body.error.reason).toBe('tunnel_replay_detected');
  });
});

describe('an edge restart', () => {
  it('the local runtimes redial by themselves and calls work again', async () => {
    const aliceSince = runtimes.alice?.lines.length ?? 0;
    const bobSince = runtimes.bob?.lines.length ?? 0;
    await edge.stop();
    await runtimes.alice?.waitFor('tunnel disconnected', 10_000, aliceSince);
    edge = startEdge();
    await edge.waitFor('mcp-edge listening');
    await Promise.all([
      runtimes.alice?.waitFor('tunnel connected', 30_000, aliceSince),
      runtimes.bob?.waitFor('tunnel connected', 30_000, bobSince),
    ]);
    const client = await mcp('alice');
    try {
      expect(await search(client, 'crash')).toEqual(['written before the crash']);
    } finally {
      await client.close();
    }
  });
});
