import { QUEUES, SCOPES } from '@pkgreg/contracts';
import { TEST_REDIS_URL } from '@pkgreg/db/testing';
import { createHttpSkillSource, type RuntimeWorker } from '@pkgreg/runtime-worker';
import { createTestWorker } from '@pkgreg/runtime-worker/testing';
import { createRuntimeQueue, type RuntimeQueue } from '@pkgreg/tasks';
import { type ModelStandIn, startModelStandIn, until } from '@pkgreg/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  callTool,
  clientWithToken,
  forgeToken,
  postMcp,
  rpc,
  type TestClient,
  useHarness,
} from './helpers.js';

// Issue 32 at the edge (docs/agent.md): what an agents invoke puts in its job for a person's app (who the
// worker may read the registry as, never a credential), and the run's progress through tasks/get in both
// revisions, from a real worker whose model holds the run.

const APP = 'https://agent.example/oauth/client.json';
const MODERN = '2026-07-28';
const TASKS = 'io.modelcontextprotocol/tasks';
const JWT = /eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*/;

// A sync invoke becomes a task after 300 ms here (the tests below hold the model longer).
const h = useHarness({ EDGE_SYNC_THRESHOLD_MS: '300' });
let model: ModelStandIn;
let worker: RuntimeWorker;
let queue: RuntimeQueue;
let machine: TestClient;

beforeAll(async () => {
  // Until a test holds it, the model fails at once: the run falls back to the rule planner and ends.
  model = await startModelStandIn(() => ({ status: 500, body: '{"error":"down"}' }));
  worker = createTestWorker(h.t.db, h.env.EDGE_QUEUE_PREFIX, {
    model: { provider: 'openai', baseUrl: model.url, model: 'stand-in', timeoutMs: 20_000 },
    // Never read: the held run is at its first model call; the others end there.
    skills: createHttpSkillSource('http://127.0.0.1:9', 500),
    limits: {
      maxSteps: 4,
      maxInputTokens: 50_000,
      maxOutputTokens: 4_000,
      maxWallMs: 30_000,
      maxSkillBytes: 16 * 1024,
      maxRetries: 0,
    },
  });
  queue = createRuntimeQueue({ connection: TEST_REDIS_URL, prefix: h.env.EDGE_QUEUE_PREFIX });
  machine = await clientWithToken(h, [SCOPES.agentsInvoke, SCOPES.registryRead]);
});

afterAll(async () => {
  model?.release();
  await worker?.close(5_000);
  await queue?.close();
  await model?.close();
});

const invokeArgs = {
  agentId: 'engineering.workflow',
  input: { type: 'text', text: 'plan the release' },
  executionMode: 'async',
};

async function invoke(token: string): Promise<string> {
  const res = await callTool(h, token, 'pkgreg.agents.v1.invoke', invokeArgs);
  expect(res.body.result?.mode, JSON.stringify(res.body)).toBe('task');
  return res.body.result.task.taskId as string;
}

async function jobData(taskId: string): Promise<Record<string, unknown>> {
  const job = await queue.queue(QUEUES.runtime).getJob(taskId);
  if (!job) throw new Error(`no job for task ${taskId}`);
  return job.data as Record<string, unknown>;
}

/** A token a person delegated to the app, as the edge's authorization server signs it. */
const delegated = (person: string, scopes: string[]) =>
  forgeToken(h, { clientId: APP, subject: person, scope: scopes.join(' ') });

describe('the agent.invoke job of a person’s app', () => {
  it('names the person and the app, and carries no credential', async () => {
    const token = await delegated('person-1', [SCOPES.agentsInvoke, SCOPES.registryRead]);
    const data = await jobData(await invoke(token));
    expect(data.delegation).toEqual({ subject: 'person-1', clientId: APP });
    const text = JSON.stringify(data);
    expect(text).not.toContain(token);
    expect(text).not.toMatch(JWT);
  });

  it('names nobody where the edge itself would read anonymously', async () => {
    // Without pkgreg.registry.read the person's app may not read the registry as them.
    const narrow = await delegated('person-2', [SCOPES.agentsInvoke]);
    expect((await jobData(await invoke(narrow))).delegation).toBeUndefined();
    // A client acting for itself has no person to read as.
    expect((await jobData(await invoke(machine.token))).delegation).toBeUndefined();
  });
});

/** A 2026-07-28 tasks/get as the 2.x client sends it, with the tasks extension declared. */
function modernTaskGet(token: string, taskId: string) {
  return postMcp(
    h,
    token,
    {
      jsonrpc: '2.0',
      id: 7,
      method: 'tasks/get',
      params: {
        taskId,
        _meta: {
          'io.modelcontextprotocol/protocolVersion': MODERN,
          'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
          'io.modelcontextprotocol/clientCapabilities': { extensions: { [TASKS]: {} } },
        },
      },
    },
    { 'MCP-Protocol-Version': MODERN, 'Mcp-Method': 'tasks/get', 'Mcp-Name': taskId },
  );
}

describe('the run’s progress through tasks/get', () => {
  it('shows what a running task is doing in both revisions, and nothing once it ended', async () => {
    // The runs the tests above queued end first: one of them must not be the run the model holds.
    await until(async () => {
      const counts = await queue.queue(QUEUES.runtime).getJobCounts('active', 'waiting', 'delayed');
      return Object.values(counts).every((n) => n === 0) || undefined;
    }, 'the earlier runs to end');
    model.answer('hold');
    const taskId = await invoke(machine.token);
    await until(async () => model.waiting === 1, 'the run to call the model');

    // 2025-11-25: the contract's task record.
    const running = await until(async () => {
      const record = (await rpc(h, machine.token, 'tasks/get', { taskId })).body.result;
      return record?.statusMessage ? record : undefined;
    }, 'the status message');
    expect(running).toMatchObject({ taskId, status: 'running', statusMessage: 'step 1/4: asking the model' });
    // 2026-07-28: the tasks extension's task.
    const modern = (await modernTaskGet(machine.token, taskId)).body.result;
    expect(modern).toMatchObject({ taskId, status: 'working', statusMessage: 'step 1/4: asking the model' });

    // The model fails; the rule planner answers and the task ends: its result says how it went.
    model.release();
    await until(async () => {
      const record = (await rpc(h, machine.token, 'tasks/get', { taskId })).body.result;
      return record?.status === 'completed' ? record : undefined;
    }, 'the task to complete');
    const ended = (await rpc(h, machine.token, 'tasks/get', { taskId })).body.result;
    expect(ended.statusMessage).toBeUndefined();
    const endedModern = (await modernTaskGet(machine.token, taskId)).body.result;
    expect(endedModern).toMatchObject({ status: 'completed' });
    expect(endedModern.statusMessage).toBeUndefined();
  });
});

describe('a 2026-07-28 client without the tasks extension', () => {
  it('gets the outcome of a sync call that ran past the threshold, not a task it could not poll', async () => {
    await until(async () => {
      const counts = await queue.queue(QUEUES.runtime).getJobCounts('active', 'waiting', 'delayed');
      return Object.values(counts).every((n) => n === 0) || undefined;
    }, 'the earlier runs to end');
    model.answer('hold');
    let settled = false;
    const call = postMcp(
      h,
      machine.token,
      {
        jsonrpc: '2.0',
        id: 9,
        method: 'tools/call',
        params: {
          name: 'pkgreg.agents.v1.invoke',
          arguments: { ...invokeArgs, executionMode: 'sync' },
          _meta: {
            'io.modelcontextprotocol/protocolVersion': MODERN,
            'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
            'io.modelcontextprotocol/clientCapabilities': {},
          },
        },
      },
      { 'MCP-Protocol-Version': MODERN, 'Mcp-Method': 'tools/call', 'Mcp-Name': 'pkgreg.agents.v1.invoke' },
    ).then((res) => {
      settled = true;
      return res;
    });
    await until(async () => model.waiting === 1, 'the run to call the model');
    // Well past the 300 ms threshold, the call is still open: the edge waits for the run.
    await new Promise((resolve) => setTimeout(resolve, 800));
    expect(settled).toBe(false);
    model.release();
    const res = await call;
    expect(res.status).toBe(200);
    expect(res.body.result.resultType).toBe('complete');
    expect(res.body.result.mode).toBeUndefined();
    expect(res.body.result.task).toBeUndefined();
    expect(res.body.result.outputs?.length).toBeGreaterThan(0);
  });
});
