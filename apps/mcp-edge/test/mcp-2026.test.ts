import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client as ModernClient, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as LegacyTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ALL_SCOPES, SCOPES } from '@pkgreg/contracts';
import { completeTask, failTask, startTask } from '@pkgreg/tasks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../src/oauth/clients.service.js';
import { createHarness, eventually, expectRpcError, type Harness, postMcp, tokenFor } from './helpers.js';

// MCP 2026-07-28 beside 2025-11-25 on one /mcp (docs/decisions.md, "MCP 2026-07-28"): the official 2.x
// client negotiates the new revision statelessly and the 1.x client initializes, against one running
// edge; the revision's envelope, routing headers and error codes on the wire; the tasks extension over
// the contract's tasks; admission the same for both.

const MODERN = '2026-07-28';
const TASKS = 'io.modelcontextprotocol/tasks';
let h: Harness;
let server: Server;
let base: string;
let c: { token: string };

beforeAll(async () => {
  server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  h = await createHarness({ PKGREG_PUBLIC_BASE_URL: base, EDGE_RATE_LIMIT_PER_MINUTE: '10000' });
  server.on('request', h.edge.handler);
  c = await clientWithToken(ALL_SCOPES);
});

/** A registered client's token for this listening edge's resource. */
async function clientWithToken(scopes: readonly string[]): Promise<{ token: string; clientId: string }> {
  const client = await createClient(h.t.db, { name: `t-${crypto.randomUUID()}`, scopes: [...scopes] });
  return { token: await tokenFor(h, client, { resource: `${base}/mcp` }), clientId: client.clientId };
}

/** POST /mcp to this edge's host. */
function post(token: string | undefined, body: unknown, headers: Record<string, string> = {}) {
  return postMcp({ app: h.app }, token, body, { Host: new URL(base).host, ...headers });
}
afterAll(async () => {
  await new Promise<void>((r) => {
    server.close(() => r());
    server.closeAllConnections();
  });
  await h?.close();
});

function modernClient(token: string | undefined) {
  const transport = new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
    requestInit: token ? { headers: { Authorization: `Bearer ${token}` } } : {},
  });
  const client = new ModernClient(
    { name: 'pkgreg-2026-test', version: '1.0.0' },
    { versionNegotiation: { mode: 'auto' } },
  );
  return { client, connect: () => client.connect(transport) };
}

/** The envelope a 2026-07-28 request carries; `tasks` declares the tasks extension. */
function envelope(tasks = false): Record<string, unknown> {
  return {
    'io.modelcontextprotocol/protocolVersion': MODERN,
    'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
    'io.modelcontextprotocol/clientCapabilities': tasks ? { extensions: { [TASKS]: {} } } : {},
  };
}

/** A 2026-07-28 request as the 2.x client sends it; `headers` overrides (undefined drops one). */
function modern(
  method: string,
  params: Record<string, unknown> = {},
  options: {
    tasks?: boolean;
    name?: string;
    headers?: Record<string, string | undefined>;
    token?: string;
  } = {},
) {
  const headers: Record<string, string | undefined> = {
    'MCP-Protocol-Version': MODERN,
    'Mcp-Method': method,
    ...(options.name !== undefined ? { 'Mcp-Name': options.name } : {}),
    ...options.headers,
  };
  const req = post(
    options.token ?? c.token,
    { jsonrpc: '2.0', id: 7, method, params: { ...params, _meta: envelope(options.tasks) } },
    Object.fromEntries(Object.entries(headers).filter((e): e is [string, string] => e[1] !== undefined)),
  );
  // postMcp sets the 2025-11-25 header; a test dropping the header removes it.
  if (headers['MCP-Protocol-Version'] === undefined) req.unset('MCP-Protocol-Version');
  return req;
}

describe('the official 2.x client (@modelcontextprotocol/client, versionNegotiation auto)', () => {
  it('negotiates 2026-07-28 without initialize: discover, tools, a call, the cache hints', async () => {
    const { client, connect } = modernClient(c.token);
    await connect();
    try {
      expect(client.getProtocolEra()).toBe('modern');
      expect(client.getNegotiatedProtocolVersion()).toBe(MODERN);
      const discovered = await client.discover();
      // Both revisions, as -32022 and the server card list them; the client picks its modern one.
      expect(discovered.supportedVersions).toEqual([MODERN, '2025-11-25']);
      expect(discovered.capabilities.extensions).toMatchObject({ [TASKS]: {} });
      expect(discovered.capabilities).not.toHaveProperty('tasks');
      expect(discovered._meta?.['io.modelcontextprotocol/serverInfo']).toEqual({
        name: 'pkgreg-mcp-edge',
        version: expect.any(String),
      });
      const listed = await client.listTools();
      expect(listed.tools).toHaveLength(10);
      // The tasks extension decides per request: no tool declares `execution` in this revision.
      for (const tool of listed.tools) expect(tool).not.toHaveProperty('execution');
      expect(listed).toMatchObject({ ttlMs: 300_000, cacheScope: 'private' });
      const info = await client.callTool({ name: 'pkgreg.system.v1.info', arguments: {} });
      expect(info.structuredContent).toMatchObject({
        server: { protocolVersion: '2025-11-25', protocolVersions: ['2025-11-25', MODERN] },
      });
    } finally {
      await client.close();
    }
  });

  it('without a token: the 401 of every request, not a fallback to initialize', async () => {
    const { connect } = modernClient(undefined);
    await expect(connect()).rejects.toThrow(/401/);
  });

  it('the 1.x client initializes against the same edge and sees the contract unchanged', async () => {
    const transport = new LegacyTransport(new URL(`${base}/mcp`), {
      requestInit: { headers: { Authorization: `Bearer ${c.token}` } },
    });
    const client = new LegacyClient({ name: 'pkgreg-2025-test', version: '1.0.0' });
    await client.connect(transport);
    try {
      expect(client.getServerCapabilities()).toMatchObject({ tools: { listChanged: false }, tasks: {} });
      const { tools } = await client.listTools();
      expect(tools.find((t) => t.name === 'pkgreg.agents.v1.invoke')?.execution).toEqual({
        taskSupport: 'optional',
      });
      const raw = await post(c.token, { jsonrpc: '2.0', id: 1, method: 'tools/list' });
      expect(raw.body.result).not.toHaveProperty('resultType');
      expect(raw.body.result).not.toHaveProperty('ttlMs');
    } finally {
      await client.close();
    }
  });
});

describe('2026-07-28 on the wire', () => {
  it('every result names its type and the server; cacheable ones their hint', async () => {
    const res = await modern('resources/templates/list');
    expect(res.status).toBe(200);
    expect(res.body.result).toMatchObject({
      resultType: 'complete',
      ttlMs: 3_600_000,
      cacheScope: 'public',
      _meta: { 'io.modelcontextprotocol/serverInfo': { name: 'pkgreg-mcp-edge' } },
    });
    // A static result (system.info is served from bytes built at start) gets them spliced in.
    const info = await modern(
      'tools/call',
      { name: 'pkgreg.system.v1.info', arguments: {} },
      { name: 'pkgreg.system.v1.info' },
    );
    expect(info.body.result).toMatchObject({
      resultType: 'complete',
      server: { backendMode: 'development' },
    });
    expect(info.body.result).not.toHaveProperty('ttlMs');
  });

  it('routing headers must repeat the body: -32020, HTTP 400', async () => {
    const noMethod = await modern('tools/list', {}, { headers: { 'Mcp-Method': undefined } });
    expectRpcError(noMethod, 400, 'header_mismatch');
    expect(noMethod.body.error).toMatchObject({
      code: -32020,
      message:
        'Bad Request: the request headers and body disagree: the body names method tools/list but the required Mcp-Method header is absent',
    });
    const otherMethod = await modern('tools/list', {}, { headers: { 'Mcp-Method': 'prompts/list' } });
    expect(otherMethod.body.error.data.mismatch).toEqual({
      header: 'prompts/list',
      body: 'the body names method tools/list but the Mcp-Method header names prompts/list',
    });
    const noVersion = await modern('tools/list', {}, { headers: { 'MCP-Protocol-Version': undefined } });
    expectRpcError(noVersion, 400, 'header_mismatch');
    const call = { name: 'pkgreg.system.v1.info', arguments: {} };
    expectRpcError(await modern('tools/call', call), 400, 'header_mismatch');
    expectRpcError(
      await modern('tools/call', call, { name: 'pkgreg.agents.v1.list' }),
      400,
      'header_mismatch',
    );
    // A value a header cannot carry travels as `=?base64?…?=`, decoded before it is compared.
    const encoded = `=?base64?${Buffer.from('pkgreg.system.v1.info').toString('base64')}?=`;
    expect((await modern('tools/call', call, { name: encoded })).body.result.resultType).toBe('complete');
    expectRpcError(await modern('tools/call', call, { name: '=?base64?abc?=' }), 400, 'header_mismatch');
  });

  it('a malformed envelope is -32602 and an unknown version -32022, both HTTP 400', async () => {
    const missing = await post(
      c.token,
      {
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/list',
        params: { _meta: { 'io.modelcontextprotocol/protocolVersion': MODERN } },
      },
      { 'MCP-Protocol-Version': MODERN, 'Mcp-Method': 'tools/list' },
    );
    expectRpcError(missing, 400, 'request_schema_invalid');
    expect(missing.body.error.data.envelope).toEqual({
      key: 'io.modelcontextprotocol/clientCapabilities',
      problem: 'missing',
    });
    const future = await post(
      c.token,
      {
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/list',
        params: {
          _meta: {
            'io.modelcontextprotocol/protocolVersion': '2027-01-01',
            'io.modelcontextprotocol/clientCapabilities': {},
          },
        },
      },
      { 'MCP-Protocol-Version': '2027-01-01', 'Mcp-Method': 'tools/list' },
    );
    expectRpcError(future, 400, 'protocol_version_unsupported');
    expect(future.body.error).toMatchObject({
      code: -32022,
      message: 'Unsupported protocol version: 2027-01-01',
      data: { supported: [MODERN, '2025-11-25'], requested: '2027-01-01' },
    });
    // The new revision's header without its envelope is neither revision.
    const bare = await post(
      c.token,
      { jsonrpc: '2.0', id: 1, method: 'tools/list' },
      { 'MCP-Protocol-Version': MODERN },
    );
    expectRpcError(bare, 400, 'request_schema_invalid');
    expect(bare.body.error.data.envelope).toEqual({ missing: ['_meta'] });
  });

  it('a version the body names and the edge does not speak is -32022 whatever the header (one it lists in discover)', async () => {
    /** server/discover naming `version` in its envelope, with `header` as MCP-Protocol-Version. */
    const discover = (version: string, header: string) =>
      post(
        c.token,
        {
          jsonrpc: '2.0',
          id: 3,
          method: 'server/discover',
          params: { _meta: { ...envelope(), 'io.modelcontextprotocol/protocolVersion': version } },
        },
        { 'MCP-Protocol-Version': header, 'Mcp-Method': 'server/discover' },
      );
    const listed = (await modern('server/discover')).body.result.supportedVersions;
    for (const version of ['v999.0.0', '2024-11-05']) {
      const res = await discover(version, version);
      expectRpcError(res, 400, 'protocol_version_unsupported');
      expect(res.body).toMatchObject({
        id: 3,
        error: { code: -32022, data: { supported: [MODERN, '2025-11-25'], requested: version } },
      });
      // The conformance tool's rule: every version the error names is one discover lists.
      for (const v of res.body.error.data.supported) expect(listed).toContain(v);
    }
    // A 2025-11-25 request (no envelope) with a header the edge does not speak is refused as before.
    for (const header of ['v999.0.0', '2024-11-05']) {
      const legacy = await post(
        c.token,
        { jsonrpc: '2.0', id: 4, method: 'tools/list' },
        { 'MCP-Protocol-Version': header },
      );
      expectRpcError(legacy, 400, 'transport_invalid');
      expect(legacy.body.error).toMatchObject({
        code: -32600,
        message: `unsupported MCP-Protocol-Version ${header}`,
      });
    }
  });

  it('a header that disagrees with the body is -32020 before the version is judged (the SDK ladder)', async () => {
    /** tools/list whose envelope names `version`, with the given routing headers. */
    const list = (version: string, headers: Record<string, string>) =>
      post(
        c.token,
        {
          jsonrpc: '2.0',
          id: 5,
          method: 'tools/list',
          params: { _meta: { ...envelope(), 'io.modelcontextprotocol/protocolVersion': version } },
        },
        headers,
      );
    const versionDisagrees = await list('v999.0.0', {
      'MCP-Protocol-Version': MODERN,
      'Mcp-Method': 'tools/list',
    });
    expectRpcError(versionDisagrees, 400, 'header_mismatch');
    expect(versionDisagrees.body.error).toMatchObject({
      code: -32020,
      data: {
        mismatch: {
          header: MODERN,
          body: `the body envelope names protocol version v999.0.0 but the MCP-Protocol-Version header names ${MODERN}`,
        },
      },
    });
    // An unknown header beside a body of the revision: the header disagrees, not the version.
    expectRpcError(
      await list(MODERN, { 'MCP-Protocol-Version': 'v999.0.0', 'Mcp-Method': 'tools/list' }),
      400,
      'header_mismatch',
    );
    const methodDisagrees = await list('v999.0.0', {
      'MCP-Protocol-Version': 'v999.0.0',
      'Mcp-Method': 'tools/call',
    });
    expectRpcError(methodDisagrees, 400, 'header_mismatch');
    expect(methodDisagrees.body.error.data.mismatch.header).toBe('tools/call');
    // A header that is missing is judged after the version (the SDK's standard-header rung).
    expectRpcError(
      await list('v999.0.0', { 'Mcp-Method': 'tools/list' }).unset('MCP-Protocol-Version'),
      400,
      'protocol_version_unsupported',
    );
    expectRpcError(
      await list('v999.0.0', { 'MCP-Protocol-Version': 'v999.0.0' }),
      400,
      'protocol_version_unsupported',
    );
  });

  it("what this revision lacks is -32601 with HTTP 404; 2025-11-25's own methods stay", async () => {
    for (const method of ['ping', 'initialize', 'tasks/result', 'prompts/list']) {
      const params = method === 'tasks/result' ? { taskId: crypto.randomUUID() } : {};
      const res = await modern(method, params, { tasks: true });
      expect(res.status, method).toBe(404);
      expect(res.body.error.code).toBe(-32601);
    }
    // server/discover is a 2026-07-28 method: a 2025-11-25 request does not have it.
    const legacy = await post(c.token, { jsonrpc: '2.0', id: 1, method: 'server/discover' });
    expectRpcError(legacy, 200, 'method_not_found');
  });

  it('admission is the same for both revisions: no token 401, too few scopes 403', async () => {
    const anonymous = await post(
      undefined,
      {
        jsonrpc: '2.0',
        id: 1,
        method: 'server/discover',
        params: { _meta: envelope() },
      },
      { 'MCP-Protocol-Version': MODERN, 'Mcp-Method': 'server/discover' },
    );
    expectRpcError(anonymous, 401, 'token_invalid');
    expect(anonymous.headers['www-authenticate']).toMatch(/^Bearer resource_metadata=/);
    const narrow = await clientWithToken([SCOPES.systemRead]);
    const read = await modern('resources/list', {}, { token: narrow.token });
    expectRpcError(read, 403, 'scope_insufficient');
  });
});

describe('the tasks extension over the contract tasks', () => {
  const invoke = { name: 'pkgreg.agents.v1.invoke' };
  const args = (executionMode: 'async' | 'sync') => ({
    agentId: 'engineering.workflow',
    input: { type: 'text', text: 'plan the release' },
    executionMode,
  });

  it("a replayed call whose task record is gone still answers its task (the call ran), at today's time", async () => {
    const idempotencyKey = crypto.randomUUID();
    const call = () =>
      modern(
        'tools/call',
        { ...invoke, arguments: { ...args('async'), idempotencyKey } },
        { tasks: true, name: invoke.name },
      );
    const first = await call();
    expect(first.status).toBe(200);
    const { taskId } = first.body.result;
    await h.t.db.deleteFrom('tasks').where('task_id', '=', taskId).execute();
    const replayed = await call();
    expect(replayed.status).toBe(200);
    expect(replayed.body.result).toMatchObject({ resultType: 'task', taskId, status: 'working' });
  });

  it('declared: an async invoke is a task; tasks/get polls it to its result inline', async () => {
    const created = await modern(
      'tools/call',
      { ...invoke, arguments: args('async') },
      {
        tasks: true,
        name: invoke.name,
      },
    );
    expect(created.status).toBe(200);
    const task = created.body.result;
    expect(task).toMatchObject({
      resultType: 'task',
      status: 'working',
      ttlMs: h.env.EDGE_MAX_TASK_POLL_WINDOW_SECONDS * 1000,
      pollIntervalMs: 1000,
      _meta: { 'io.modelcontextprotocol/serverInfo': { name: 'pkgreg-mcp-edge' } },
    });
    const { taskId } = task;
    const poll = () => modern('tasks/get', { taskId }, { tasks: true, name: taskId });
    const working = (await poll()).body.result;
    expect(working).toMatchObject({ taskId, status: 'working', resultType: 'complete' });
    // The task's times are its record's, the same in the CreateTaskResult and tasks/get.
    expect(working.createdAt).toBe(task.createdAt);
    expect(working.lastUpdatedAt).toBe(task.lastUpdatedAt);
    await startTask(h.t.db, taskId);
    await completeTask(h.t.db, taskId, async () => ({
      runId: task['pkgreg.dev/runId'],
      outputs: [{ type: 'text' as const, text: 'planned' }],
    }));
    const done = (await poll()).body.result;
    expect(done).toMatchObject({ taskId, status: 'completed', resultType: 'complete' });
    expect(done.result.structuredContent).toEqual({
      runId: task['pkgreg.dev/runId'],
      outputs: [{ type: 'text', text: 'planned' }],
    });
    // Nothing is left to cancel once it ended; Mcp-Name must be the task's id.
    expect((await modern('tasks/cancel', { taskId }, { tasks: true, name: taskId })).body.result).toEqual({
      resultType: 'complete',
      _meta: { 'io.modelcontextprotocol/serverInfo': expect.any(Object) },
    });
    expectRpcError(await modern('tasks/get', { taskId }, { tasks: true }), 400, 'header_mismatch');
  });

  it('tasks/cancel and tasks/update are acknowledged; the run goes on; another client sees no task', async () => {
    const { taskId } = (
      await modern('tools/call', { ...invoke, arguments: args('async') }, { tasks: true, name: invoke.name })
    ).body.result;
    await startTask(h.t.db, taskId);
    const ack = {
      resultType: 'complete',
      _meta: { 'io.modelcontextprotocol/serverInfo': expect.any(Object) },
    };
    const change = (method: 'tasks/cancel' | 'tasks/update', token = c.token) =>
      modern(
        method,
        method === 'tasks/update' ? { taskId, inputResponses: { never: { action: 'accept' } } } : { taskId },
        { tasks: true, name: taskId, token },
      );
    // A running run: cancel is acknowledged (it cannot be stopped), and so is input it never asked for.
    for (const method of ['tasks/cancel', 'tasks/update'] as const) {
      const res = await change(method);
      expect(res.status, method).toBe(200);
      expect(res.body.result, method).toEqual(ack);
    }
    const poll = () => modern('tasks/get', { taskId }, { tasks: true, name: taskId });
    expect((await poll()).body.result.status).toBe('working');
    // Another client's task, or none, is not found for each method alike.
    const other = await clientWithToken(ALL_SCOPES);
    for (const method of ['tasks/get', 'tasks/cancel', 'tasks/update'] as const) {
      const res =
        method === 'tasks/get'
          ? await modern(method, { taskId }, { tasks: true, name: taskId, token: other.token })
          : await change(method, other.token);
      expectRpcError(res, 200, 'task_not_found');
      const unknown = crypto.randomUUID();
      expectRpcError(
        await modern(method, { taskId: unknown }, { tasks: true, name: unknown }),
        200,
        'task_not_found',
      );
    }
    // The cancelled run completes, and tasks/get says how.
    await completeTask(h.t.db, taskId, async () => ({ runId: crypto.randomUUID(), outputs: [] }));
    expect((await poll()).body.result.status).toBe('completed');
    for (const method of ['tasks/cancel', 'tasks/update'] as const) {
      expect((await change(method)).body.result, method).toEqual(ack);
    }
  });

  it('a failed run is a completed task whose result is the tool error the untasked call returns', async () => {
    const { taskId } = (
      await modern('tools/call', { ...invoke, arguments: args('async') }, { tasks: true, name: invoke.name })
    ).body.result;
    await startTask(h.t.db, taskId);
    await failTask(h.t.db, taskId, { reason: 'run_failed', message: 'no plan' });
    const tasked = (await modern('tasks/get', { taskId }, { tasks: true, name: taskId })).body.result;
    expect(tasked).toMatchObject({ taskId, status: 'completed', resultType: 'complete' });
    expect(tasked).not.toHaveProperty('error');
    expect(tasked.result).toEqual({ content: [{ type: 'text', text: 'no plan' }], isError: true });

    // The same run without the extension: a sync call the edge waits for, answered with its outcome.
    const caller = await clientWithToken(ALL_SCOPES);
    // Sent now (`then`), answered once the run has ended.
    const call = modern(
      'tools/call',
      { ...invoke, arguments: args('sync') },
      { name: invoke.name, token: caller.token },
    ).then((res) => res);
    const row = await eventually(() =>
      h.t.db
        .selectFrom('tasks')
        .select('task_id')
        .where('client_id', '=', caller.clientId)
        .executeTakeFirstOrThrow(),
    );
    await startTask(h.t.db, row.task_id);
    await failTask(h.t.db, row.task_id, { reason: 'run_failed', message: 'no plan' });
    const { resultType, _meta, ...untasked } = (await call).body.result;
    expect(resultType).toBe('complete');
    expect(untasked).toEqual(tasked.result);
  });

  it('not declared: tasks/* and an async call are -32021 naming the extension', async () => {
    const taskId = crypto.randomUUID();
    const get = await modern('tasks/get', { taskId }, { name: taskId });
    expect(get.status).toBe(400);
    expect(get.body.error).toMatchObject({
      code: -32021,
      data: { requiredCapabilities: { extensions: { [TASKS]: {} } } },
    });
    const call = await modern('tools/call', { ...invoke, arguments: args('async') }, { name: invoke.name });
    expectRpcError(call, 400, 'capability_missing');
  });
});
