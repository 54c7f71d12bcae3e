import { once } from 'node:events';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { QUEUES } from '@pkgreg/contracts';
import { TEST_REDIS_URL } from '@pkgreg/db/testing';
import { createRuntimeQueue, type RuntimeQueue } from '@pkgreg/tasks';
import { type ServerProcess, startServerProcess, until } from '@pkgreg/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BASE, callTool, clientWithToken, type Harness, useHarness } from './helpers.js';

// SIGTERM while a sync invoke waits (README, SHUTDOWN_GRACE_MS): the built edge must answer it, as a task
// once the sync threshold passes, and exit 0, not be cut off by its shutdown timer. No worker consumes
// the queue, so the invoke waits the whole threshold, which is above the old fixed grace.

const EDGE_ENTRY = resolve(dirname(fileURLToPath(import.meta.url)), '../dist/index.js');
const h = useHarness();
let queue: RuntimeQueue;
let edge: ServerProcess | undefined;

beforeAll(async () => {
  queue = createRuntimeQueue({ connection: TEST_REDIS_URL, prefix: h.env.EDGE_QUEUE_PREFIX });
});

afterAll(async () => {
  if (edge && edge.child.exitCode === null) edge.child.kill('SIGKILL');
  await queue?.close();
});

describe('shutdown', () => {
  it('answers a sync invoke that is waiting at SIGTERM and exits 0', async () => {
    const client = await clientWithToken(h as Harness);
    edge = await startServerProcess({
      name: 'mcp-edge',
      entry: EDGE_ENTRY,
      hostVariable: 'EDGE_HOST',
      portVariable: 'EDGE_PORT',
      env: {
        PKGREG_PUBLIC_BASE_URL: BASE,
        DATABASE_URL: h.t.url,
        REDIS_URL: TEST_REDIS_URL,
        EDGE_QUEUE_PREFIX: h.env.EDGE_QUEUE_PREFIX,
        EDGE_SYNC_THRESHOLD_MS: '11000',
      },
    });
    const { child, url } = edge;
    const exited = once(child, 'exit');

    const answer = callTool(
      { app: url as unknown as Harness['app'] },
      client.token,
      'pkgreg.agents.v1.invoke',
      {
        agentId: 'engineering.workflow',
        input: { type: 'text', text: 'plan a release' },
      },
    ).then((res) => res);
    // The invoke is waiting once its job is queued.
    const runtime = queue.queue(QUEUES.runtime);
    await until(async () => (await runtime.getWaitingCount()) > 0, 'the invoke to be queued', 20_000);
    child.kill('SIGTERM');

    const res = await answer;
    expect(res.status).toBe(200);
    expect(res.body.result?.task?.taskId).toEqual(expect.any(String));
    const [code] = await exited;
    expect(code).toBe(0);
  }, 60_000);
});
