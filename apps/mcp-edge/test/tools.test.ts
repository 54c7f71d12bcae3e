import { randomUUID } from 'node:crypto';
import {
  AGENT_CATALOG,
  MCP_PROTOCOL_VERSION,
  QUEUES,
  SCOPES,
  SystemInfoResultSchema,
  ToolDescriptorSchema,
} from '@pkgreg/contracts';
import { TEST_REDIS_URL } from '@pkgreg/db/testing';
import { quarantineNamespace, releaseNamespace } from '@pkgreg/memory';
import { createLogger } from '@pkgreg/server-kit';
import { completeTask, failTask, startTask } from '@pkgreg/tasks';
import { Worker } from 'bullmq';
import { sql } from 'kysely';
import { beforeAll, describe, expect, it } from 'vitest';
import { createEdge } from '../src/app.js';
import {
  callTool,
  clientWithToken,
  createHarness,
  expectRpcError,
  forgeToken,
  rpc,
  type TestClient,
  useHarness,
} from './helpers.js';

// Happy paths and tool rules: mcp-edge.md (Endpoints, Tools, System info) and decisions.md (MCP edge).

const h = useHarness({ EDGE_SYNC_THRESHOLD_MS: '300', PKGREG_SERVER_PHASE: 'phase-7' });
let c: TestClient;
beforeAll(async () => {
  c = await clientWithToken(h);
});

const put = (args: Record<string, unknown>, who: TestClient = c) =>
  callTool(h, who.token, 'pkgreg.memory.v1.put', { namespace: who.namespace, ...args });

describe('initialize and ping (mcp-edge.md, Endpoints; MCP lifecycle version negotiation)', () => {
  it('answers the seed result and echoes a supported version', async () => {
    const res = await rpc(h, c.token, 'initialize', {
      protocolVersion: '2025-06-18',
      clientInfo: { name: 't', version: '1' },
      capabilities: {},
    });
    expect(res.body.result).toEqual({
      protocolVersion: '2025-06-18',
      serverInfo: { name: 'pkgreg-mcp-edge', version: expect.any(String) },
      capabilities: {
        tools: { listChanged: false },
        resources: { subscribe: false, listChanged: false },
        tasks: {},
        extensions: { 'io.modelcontextprotocol/skills': { directoryRead: true } },
      },
    });
  });

  it('answers the latest version when the requested one is unknown', async () => {
    const res = await rpc(h, c.token, 'initialize', {
      protocolVersion: '2099-01-01',
      clientInfo: { name: 't', version: '1' },
    });
    expect(res.body.result.protocolVersion).toBe(MCP_PROTOCOL_VERSION);
  });

  it('refuses initialize without clientInfo as request_schema_invalid', async () => {
    expectRpcError(
      await rpc(h, c.token, 'initialize', { protocolVersion: '2025-11-25' }),
      200,
      'request_schema_invalid',
    );
  });

  it('ping → {}', async () => {
    expect((await rpc(h, c.token, 'ping')).body.result).toEqual({});
  });
});

describe('tools/list (mcp-edge.md, Authentication 6)', () => {
  it('lists all ten tools with descriptor fields for a caller holding every scope', async () => {
    const res = await rpc(h, c.token, 'tools/list');
    const tools = res.body.result.tools;
    expect(tools.map((t: { name: string }) => t.name).sort()).toEqual(
      [
        'pkgreg.agents.v1.invoke',
        'pkgreg.agents.v1.list',
        'pkgreg.memory.v1.compact',
        'pkgreg.memory.v1.delete',
        'pkgreg.memory.v1.get',
        'pkgreg.memory.v1.put',
        'pkgreg.memory.v1.search',
        'pkgreg.registry.v1.get',
        'pkgreg.registry.v1.search',
        'pkgreg.system.v1.info',
      ].sort(),
    );
    for (const t of tools) {
      expect(ToolDescriptorSchema.parse(t)).toBeTruthy();
      expect(t).toMatchObject({ capabilities: ['external'], permissionScope: 'external' });
      expect(t.inputSchema.type).toBe('object');
      expect(t.outputSchema.type).toBe('object');
      expect(t.inputSchema.$schema).toBeUndefined();
    }
    const invoke = tools.find((t: { name: string }) => t.name === 'pkgreg.agents.v1.invoke');
    expect(invoke.execution.taskSupport).toBe('optional');
    expect(tools.find((t: { name: string }) => t.name === 'pkgreg.memory.v1.put').execution.taskSupport).toBe(
      'forbidden',
    );
  });

  it('a token with pkgreg.system.read only sees the list and info tools', async () => {
    const t = await forgeToken(h, { scope: SCOPES.systemRead, clientId: c.clientId });
    const names = (await rpc(h, t, 'tools/list')).body.result.tools.map((x: { name: string }) => x.name);
    expect(names.sort()).toEqual(['pkgreg.agents.v1.list', 'pkgreg.system.v1.info']);
  });

  it('stm read + ltm write sees get, search and compact, not put', async () => {
    const t = await forgeToken(h, { scope: `${SCOPES.stmRead} ${SCOPES.ltmWrite}`, clientId: c.clientId });
    const names = (await rpc(h, t, 'tools/list')).body.result.tools.map((x: { name: string }) => x.name);
    expect(names.sort()).toEqual(
      [
        'pkgreg.memory.v1.compact',
        'pkgreg.memory.v1.get',
        'pkgreg.memory.v1.put',
        'pkgreg.memory.v1.search',
      ].sort(),
    );
  });

  it('leaves out mappings the operator disabled, and calling one is method_not_found', async () => {
    const other = await createHarness({ EDGE_DISABLED_TOOLS: 'pkgreg.agents.v1.invoke' });
    try {
      const oc = await clientWithToken(other);
      const names = (await rpc(other, oc.token, 'tools/list')).body.result.tools.map(
        (x: { name: string }) => x.name,
      );
      expect(names).not.toContain('pkgreg.agents.v1.invoke');
      expect(names).toHaveLength(9);
      const res = await callTool(other, oc.token, 'pkgreg.agents.v1.invoke', {
        agentId: 'engineering.workflow',
        input: { type: 'text', text: 'x' },
      });
      expectRpcError(res, 200, 'method_not_found');
    } finally {
      await other.close();
    }
  });
});

describe('tool results carry the tool object, content and structuredContent (decisions.md)', () => {
  // Edge-local results are encoded once at start and spliced around each request's id.
  it('static results echo each request id (string or integer) with an exact Content-Length', async () => {
    const first = await rpc(h, c.token, 'tools/call', { name: 'pkgreg.system.v1.info' }, { id: 'a"b\\é' });
    const second = await rpc(
      h,
      c.token,
      'tools/call',
      { name: 'pkgreg.agents.v1.list', arguments: {} },
      { id: 42 },
    );
    for (const [res, id] of [
      [first, 'a"b\\é'],
      [second, 42],
    ] as const) {
      expect(res.status).toBe(200);
      expect(res.body.jsonrpc).toBe('2.0');
      expect(res.body.id).toBe(id);
      expect(Number(res.headers['content-length'])).toBe(Buffer.byteLength(res.text));
      expect(res.body.result.structuredContent).toBeDefined();
      expect(res.body.result.content[0].text).toBe(JSON.stringify(res.body.result.structuredContent));
    }
  });

  // docs/decisions.md: no MCP task augmentation (capabilities.tasks has no requests.tools.call).
  it("a tools/call carrying MCP's `task` field is processed normally, the field ignored", async () => {
    const plain = await rpc(h, c.token, 'tools/call', { name: 'pkgreg.system.v1.info' });
    const augmented = await rpc(h, c.token, 'tools/call', {
      name: 'pkgreg.system.v1.info',
      arguments: {},
      task: { ttl: 60_000 },
    });
    expect(augmented.status).toBe(200);
    expect(augmented.body.result).toEqual(plain.body.result);
    expect(augmented.body.result.task).toBeUndefined();
  });

  // The tools/call envelope skips zod for the usual shape; anything else still gets the schema's refusal.
  it('tools/call params: omitted arguments default to {}; a non-object or missing name is -32602', async () => {
    expect(
      (await rpc(h, c.token, 'tools/call', { name: 'pkgreg.system.v1.info' })).body.result,
    ).toBeDefined();
    for (const params of [
      { name: 'pkgreg.system.v1.info', arguments: [] },
      { name: 'pkgreg.system.v1.info', arguments: 'x' },
      { name: '', arguments: {} },
      { arguments: {} },
    ]) {
      const res = await rpc(h, c.token, 'tools/call', params);
      expectRpcError(res, 200, 'request_schema_invalid');
      expect(res.body.error.code).toBe(-32602);
      expect(res.body.error.data.issues.length).toBeGreaterThan(0);
    }
  });

  it('system info: every seed field, server.phase/name from env, limits and quotas from config', async () => {
    const res = await callTool(h, c.token, 'pkgreg.system.v1.info');
    const result = res.body.result;
    const info = SystemInfoResultSchema.parse(result.structuredContent);
    expect(info.server).toEqual({
      name: 'pkgreg-mcp-edge',
      phase: 'phase-7',
      backendMode: 'development',
      // The contract's version, and every revision the endpoint serves (issue 31).
      protocolVersion: '2025-11-25',
      protocolVersions: ['2025-11-25', '2026-07-28'],
    });
    expect(info.features).toEqual({
      publicAgents: true,
      publicSystemInfo: true,
      publicTasks: true,
      publicCompactAsync: true,
    });
    expect(info.limits).toMatchObject({
      maxInvokeInputBytes: 8192,
      maxSearchTopK: 50,
      maxTaskPollWindowSeconds: 300,
      // Issue 32: one agent run's limits, and which planner runs (no model configured: the rules).
      agentMaxSteps: 8,
      agentMaxInputTokens: 60_000,
      agentMaxOutputTokens: 8_000,
      agentMaxWallMs: 60_000,
      agentMaxSkillBytes: 49_152,
    });
    expect(info.agent).toEqual({ planner: 'rules', provider: null });
    expect(info.quotas).toMatchObject({ invokePerMinute: 10, compactPerMinute: 10 });
    expect(info.tasks).toEqual({
      supportedMethods: ['tasks/get', 'tasks/result'],
      toolSupport: { 'pkgreg.agents.v1.invoke': 'optional', 'pkgreg.memory.v1.compact': 'optional' },
    });
    expect(result.server).toEqual(info.server);
    expect(result.content).toEqual([{ type: 'text', text: JSON.stringify(info) }]);
  });

  it('agents list returns the catalog', async () => {
    const res = await callTool(h, c.token, 'pkgreg.agents.v1.list');
    expect(res.body.result.agents).toEqual(AGENT_CATALOG);
    expect(res.body.result.structuredContent.agents[0].agentId).toBe('engineering.workflow');
  });
});

describe('memory tools (mcp-edge.md, States and transitions; decisions.md, Memory entry)', () => {
  it('put → get → supersede → search → delete', async () => {
    const first = (await put({ tier: 'ltm', content: 'the deploy target is fly.io', tags: ['infra'] })).body
      .result;
    expect(first.entry).toMatchObject({ tier: 'ltm', status: 'active', tags: ['infra'] });
    const got = await callTool(h, c.token, 'pkgreg.memory.v1.get', {
      namespace: c.namespace,
      entryId: first.entry.entryId,
    });
    expect(got.body.result.entry.content).toBe('the deploy target is fly.io');

    const second = (
      await put({
        tier: 'ltm',
        content: 'the deploy target is k8s',
        mode: 'supersede',
        supersedesEntryId: first.entry.entryId,
      })
    ).body.result;
    expect(second.supersededEntryId).toBe(first.entry.entryId);
    const old = await callTool(h, c.token, 'pkgreg.memory.v1.get', {
      namespace: c.namespace,
      entryId: first.entry.entryId,
    });
    expect(old.body.result.entry.status).toBe('superseded');

    const found = await callTool(h, c.token, 'pkgreg.memory.v1.search', {
      namespace: c.namespace,
      query: 'deploy target',
    });
    expect(found.body.result.results.map((r: { entry: { entryId: string } }) => r.entry.entryId)).toEqual([
      second.entry.entryId,
    ]);

    const del = await callTool(h, c.token, 'pkgreg.memory.v1.delete', {
      namespace: c.namespace,
      entryId: second.entry.entryId,
    });
    expect(del.body.result.entry.status).toBe('deleted');
    const after = await callTool(h, c.token, 'pkgreg.memory.v1.search', {
      namespace: c.namespace,
      query: 'deploy target',
    });
    expect(after.body.result.total).toBe(0);
  });

  it('search defaults to the tiers the caller may read; asking for an unreadable tier is scope_insufficient', async () => {
    const mine = await clientWithToken(h);
    await put({ tier: 'stm', content: 'zebra stm note' }, mine);
    await put({ tier: 'ltm', content: 'zebra ltm fact' }, mine);
    const stmOnly = await forgeToken(h, { scope: SCOPES.stmRead, clientId: mine.clientId });
    const res = await callTool(h, stmOnly, 'pkgreg.memory.v1.search', {
      namespace: mine.namespace,
      query: 'zebra',
    });
    expect(res.body.result.results.map((r: { entry: { tier: string } }) => r.entry.tier)).toEqual(['stm']);
    const both = await callTool(h, mine.token, 'pkgreg.memory.v1.search', {
      namespace: mine.namespace,
      query: 'zebra',
    });
    expect(both.body.result.total).toBe(2);
    const ltm = await callTool(h, stmOnly, 'pkgreg.memory.v1.search', {
      namespace: mine.namespace,
      query: 'zebra',
      tiers: ['ltm'],
    });
    expectRpcError(ltm, 403, 'scope_insufficient');
  });

  it('no public path reaches promoted-tier memory: any tier but stm/ltm is request_schema_invalid', async () => {
    for (const tier of ['promoted', 'internal']) {
      expectRpcError(await put({ tier, content: 'x' }), 200, 'request_schema_invalid');
      expectRpcError(
        await callTool(h, c.token, 'pkgreg.memory.v1.search', {
          namespace: c.namespace,
          query: 'x',
          tiers: [tier],
        }),
        200,
        'request_schema_invalid',
      );
    }
  });

  it('get and delete need the scope of the entry’s own tier', async () => {
    const entry = (await put({ tier: 'ltm', content: 'tiered' })).body.result.entry;
    const stmOnly = await forgeToken(h, {
      scope: `${SCOPES.stmRead} ${SCOPES.stmDelete}`,
      clientId: c.clientId,
    });
    expectRpcError(
      await callTool(h, stmOnly, 'pkgreg.memory.v1.get', { namespace: c.namespace, entryId: entry.entryId }),
      403,
      'scope_insufficient',
    );
    expectRpcError(
      await callTool(h, stmOnly, 'pkgreg.memory.v1.delete', {
        namespace: c.namespace,
        entryId: entry.entryId,
      }),
      403,
      'scope_insufficient',
    );
    const still = await callTool(h, c.token, 'pkgreg.memory.v1.get', {
      namespace: c.namespace,
      entryId: entry.entryId,
    });
    expect(still.body.result.entry.status).toBe('active');
  });

  it('idempotency: same key + same args replays the first result; different args → request_schema_invalid', async () => {
    const key = randomUUID();
    const a = (await put({ tier: 'stm', content: 'once', idempotencyKey: key })).body.result;
    const b = (await put({ tier: 'stm', content: 'once', idempotencyKey: key })).body.result;
    expect(b.entry.entryId).toBe(a.entry.entryId);
    const count = await h.t.db
      .selectFrom('memory_entries')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('content', '=', 'once')
      .executeTakeFirstOrThrow();
    expect(Number(count.n)).toBe(1);
    expectRpcError(
      await put({ tier: 'stm', content: 'twice', idempotencyKey: key }),
      200,
      'request_schema_invalid',
    );
  });

  it('source_quarantined: writes, deletes, compactions and write-bound invokes are refused; reads are not', async () => {
    const q = await clientWithToken(h);
    const entry = (await put({ tier: 'stm', content: 'before quarantine' }, q)).body.result.entry;
    await quarantineNamespace(h.t.db, q.namespace, 'test');
    try {
      expectRpcError(await put({ tier: 'stm', content: 'after' }, q), 200, 'source_quarantined');
      expectRpcError(
        await callTool(h, q.token, 'pkgreg.memory.v1.delete', {
          namespace: q.namespace,
          entryId: entry.entryId,
        }),
        200,
        'source_quarantined',
      );
      expectRpcError(
        await callTool(h, q.token, 'pkgreg.memory.v1.compact', {
          namespace: q.namespace,
          strategy: 'summarize',
        }),
        200,
        'source_quarantined',
      );
      const invoke = (writeTiers: string[]) =>
        callTool(h, q.token, 'pkgreg.agents.v1.invoke', {
          agentId: 'engineering.workflow',
          input: { type: 'text', text: 'x' },
          executionMode: 'async',
          memory: { namespace: q.namespace, readTiers: ['ltm'], writeTiers },
        });
      expectRpcError(await invoke(['stm']), 200, 'source_quarantined');
      expect((await invoke([])).body.result.mode).toBe('task');
      const read = await callTool(h, q.token, 'pkgreg.memory.v1.get', {
        namespace: q.namespace,
        entryId: entry.entryId,
      });
      expect(read.body.result.entry.status).toBe('active');
    } finally {
      await releaseNamespace(h.t.db, q.namespace);
    }
    expect((await put({ tier: 'stm', content: 'released' }, q)).body.result.entry.status).toBe('active');
  });
});

describe('compact (decisions.md: strategy-derived scopes)', () => {
  it('summarize needs stm read + stm write; extract_facts needs stm read + ltm write', async () => {
    const t = await forgeToken(h, { scope: `${SCOPES.stmRead} ${SCOPES.stmWrite}`, clientId: c.clientId });
    const ok = await callTool(h, t, 'pkgreg.memory.v1.compact', {
      namespace: c.namespace,
      strategy: 'summarize',
      executionMode: 'async',
    });
    expect(ok.body.result).toMatchObject({ mode: 'task', task: { status: 'queued' } });
    const facts = await callTool(h, t, 'pkgreg.memory.v1.compact', {
      namespace: c.namespace,
      strategy: 'extract_facts',
      executionMode: 'async',
    });
    expectRpcError(facts, 403, 'scope_insufficient');
    expect(facts.body.error.data.requiredScopes).toEqual([SCOPES.ltmWrite]);
  });
});

describe('invoke (mcp-edge.md, Tools; decisions.md, Invoke)', () => {
  const invoke = (args: Record<string, unknown>, who: TestClient = c) =>
    callTool(h, who.token, 'pkgreg.agents.v1.invoke', {
      agentId: 'engineering.workflow',
      input: { type: 'text', text: 'plan a release' },
      ...args,
    });

  it('agent_not_available for an agent outside the catalog', async () => {
    const res = await invoke({ agentId: 'internal.shell' });
    expectRpcError(res, 200, 'agent_not_available');
    expect(res.body.error.code).toBe(-32006);
  });

  it('memory_binding_forbidden for tiers beyond the agent’s binding (ltm read, stm write)', async () => {
    const res = await invoke({ memory: { namespace: c.namespace, readTiers: ['stm'], writeTiers: ['ltm'] } });
    expectRpcError(res, 200, 'memory_binding_forbidden');
    expect(res.body.error.data.forbidden).toEqual(['read:stm', 'write:ltm']);
  });

  it('input over 8192 bytes is request_schema_invalid', async () => {
    expectRpcError(
      await invoke({ input: { type: 'text', text: 'x'.repeat(9000) } }),
      200,
      'request_schema_invalid',
    );
  });

  it('async → mode task (queued); tasks/get shows it; tasks/result is task_not_ready until it completes', async () => {
    const accepted = (await invoke({ executionMode: 'async' })).body.result;
    expect(accepted).toMatchObject({ mode: 'task', task: { status: 'queued' } });
    const { taskId, runId } = accepted.task;
    const record = (await rpc(h, c.token, 'tasks/get', { taskId })).body.result;
    expect(record).toMatchObject({
      taskId,
      toolName: 'pkgreg.agents.v1.invoke',
      subjectNamespace: c.namespace,
      canonicalRunId: runId,
      status: 'queued',
    });
    const notReady = await rpc(h, c.token, 'tasks/result', { taskId });
    expectRpcError(notReady, 200, 'task_not_ready');
    expect(notReady.body.error.code).toBe(-32007);

    // The runtime worker's side of the contract (@pkgreg/tasks): start, then complete with outputs.
    await startTask(h.t.db, taskId);
    expect((await rpc(h, c.token, 'tasks/get', { taskId })).body.result.status).toBe('running');
    await completeTask(h.t.db, taskId, async () => ({
      runId,
      outputs: [{ type: 'text' as const, text: 'done' }],
    }));
    const done = (await rpc(h, c.token, 'tasks/result', { taskId })).body.result;
    expect(done).toEqual({
      taskId,
      status: 'completed',
      result: { runId, outputs: [{ type: 'text', text: 'done' }] },
    });
  });

  it('tasks/result of a failed task returns {taskId, status: failed, error} (decisions.md: Tasks)', async () => {
    const { taskId } = (await invoke({ executionMode: 'async' })).body.result.task;
    await startTask(h.t.db, taskId);
    await failTask(h.t.db, taskId, { reason: 'run_failed', message: 'the plan could not be made' });
    const res = (await rpc(h, c.token, 'tasks/result', { taskId })).body.result;
    expect(res).toEqual({
      taskId,
      status: 'failed',
      error: { reason: 'run_failed', message: 'the plan could not be made' },
    });
  });

  it('a finished task stays pollable for maxTaskPollWindowSeconds, then is task_not_found', async () => {
    // The window is read against the task's finished_at: the test moves that back instead of sleeping
    // through a window short enough for a loaded machine to miss its first poll.
    const short = await createHarness({ EDGE_MAX_TASK_POLL_WINDOW_SECONDS: '120' });
    const endedAgo = (seconds: number) =>
      short.t.db
        .updateTable('tasks')
        .set({ finished_at: sql<Date>`now() - make_interval(secs => ${seconds})` })
        .where('task_id', '=', taskId)
        .execute();
    let taskId = '';
    try {
      const sc = await clientWithToken(short);
      const accepted = await callTool(short, sc.token, 'pkgreg.agents.v1.invoke', {
        agentId: 'engineering.workflow',
        input: { type: 'text', text: 'plan' },
        executionMode: 'async',
      });
      const { runId } = accepted.body.result.task;
      taskId = accepted.body.result.task.taskId;
      await startTask(short.t.db, taskId);
      await completeTask(short.t.db, taskId, async () => ({ runId, outputs: [] }), 120);
      expect((await rpc(short, sc.token, 'tasks/get', { taskId })).body.result.status).toBe('completed');
      await endedAgo(110);
      expect((await rpc(short, sc.token, 'tasks/get', { taskId })).body.result.status).toBe('completed');
      await endedAgo(121);
      expectRpcError(await rpc(short, sc.token, 'tasks/get', { taskId }), 200, 'task_not_found');
    } finally {
      await short.close();
    }
  });

  it('sync not finished within the sync threshold is answered as mode task', async () => {
    const started = Date.now();
    const res = (await invoke({ executionMode: 'sync' })).body.result;
    expect(res.mode).toBe('task');
    expect(Date.now() - started).toBeGreaterThanOrEqual(250);
  });

  it('sync finished within the threshold → mode completed with outputs (a queue consumer completes the run)', async () => {
    // Stands in for apps/runtime-worker: consumes the edge's runtime queue through @pkgreg/tasks.
    const worker = new Worker(
      QUEUES.runtime,
      async (job) => {
        const { taskId, runId } = job.data as { taskId: string; runId: string };
        await startTask(h.t.db, taskId);
        await completeTask(h.t.db, taskId, async () => ({
          runId,
          outputs: [{ type: 'text' as const, text: 'planned' }],
        }));
      },
      { connection: { url: TEST_REDIS_URL, maxRetriesPerRequest: null }, prefix: h.env.EDGE_QUEUE_PREFIX },
    );
    // Same database and queue as `h`, with a sync threshold the run comfortably meets.
    const patient = createEdge({
      db: h.t.db,
      redis: h.redis,
      logger: createLogger('t', 'silent'),
      env: { ...h.env, EDGE_SYNC_THRESHOLD_MS: 8000 },
    });
    try {
      const res = await callTool(patient, c.token, 'pkgreg.agents.v1.invoke', {
        agentId: 'engineering.workflow',
        input: { type: 'text', text: 'plan' },
      });
      expect(res.body.result).toMatchObject({
        mode: 'completed',
        outputs: [{ type: 'text', text: 'planned' }],
      });
      expect(res.body.result.runId).toMatch(/^[0-9a-f-]{36}$/);
    } finally {
      await patient.shutdown();
      await worker.close();
    }
  }, 20_000);
});
