import { randomUUID } from 'node:crypto';
import { type AgentsInvokeArgs, QUEUES, RejectError } from '@pkgreg/contracts';
import { createTestDatabase, TEST_REDIS_URL, type TestDatabase, testKeyPrefix } from '@pkgreg/db/testing';
import { type Job, Worker } from 'bullmq';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  completeTask,
  createRuntimeQueue,
  createTaskEvents,
  failOrphanedTasks,
  failTask,
  findTaskById,
  getTaskRecord,
  getTaskResult,
  purgeExpiredTasks,
  type RuntimeQueue,
  startTask,
  submitCompact,
  submitInvoke,
  type TaskEvents,
} from '../src/index.js';

// decisions.md, MCP edge / Invoke and Tasks. Real Postgres + Redis + BullMQ; the worker here is a
// minimal BullMQ consumer built on this package's own worker-side API (startTask/completeTask/failTask).

const NS = `app:${'a'.repeat(64)}`;
const OTHER_NS = `app:${'b'.repeat(64)}`;

type Behaviour = 'complete' | 'fail' | 'hold';

let tdb: TestDatabase;
let queue: RuntimeQueue;
let events: TaskEvents;
let worker: Worker;
const prefix = testKeyPrefix('tasks');
const behaviour = new Map<string, Behaviour>();
const gates = new Map<string, () => void>();
let nextBehaviour: Behaviour = 'complete';

function invokeArgs(text: string, mode: 'sync' | 'async'): AgentsInvokeArgs {
  return { agentId: 'engineering.workflow', input: { type: 'text', text }, executionMode: mode };
}

async function rejectReason(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof RejectError) return error.reason;
    throw error;
  }
  return 'resolved';
}

async function until<T>(fn: () => Promise<T | undefined>, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await fn();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}

beforeAll(async () => {
  tdb = await createTestDatabase();
  queue = createRuntimeQueue({ connection: TEST_REDIS_URL, prefix });
  events = await createTaskEvents({ connection: TEST_REDIS_URL, prefix });
  worker = new Worker(
    QUEUES.runtime,
    async (job: Job) => {
      const { taskId } = job.data as { taskId: string; runId: string };
      const started = await startTask(tdb.db, taskId);
      if (started.state !== 'started') return;
      const mode = behaviour.get(taskId) ?? nextBehaviour;
      if (mode === 'hold') await new Promise<void>((resolve) => gates.set(taskId, resolve));
      if (mode === 'fail') {
        await failTask(tdb.db, taskId, { reason: 'agent_failed', message: 'planner refused the input' });
        return;
      }
      await completeTask(tdb.db, taskId, async (_trx, task) => ({
        runId: task.canonical_run_id,
        outputs: [{ type: 'text' as const, text: `done ${job.name}` }],
        ...(job.name === 'memory.compact'
          ? { strategy: 'summarize', sourceEntryIds: [], createdEntries: [] }
          : {}),
      }));
    },
    { connection: { url: TEST_REDIS_URL, maxRetriesPerRequest: null }, prefix, concurrency: 10 },
  );
  worker.on('error', () => {});
  await worker.waitUntilReady();
});

afterAll(async () => {
  for (const open of gates.values()) open();
  await worker?.close();
  await events?.close();
  await queue?.close();
  await tdb?.destroy();
});

describe('submitInvoke (decisions.md: Invoke)', () => {
  it('async answers mode task at once with a queued handle', async () => {
    nextBehaviour = 'complete';
    const result = await submitInvoke(
      { db: tdb.db, queue, events },
      { namespace: NS, clientId: 'c1', args: invokeArgs('plan it', 'async') },
    );
    expect(result.mode).toBe('task');
    if (result.mode !== 'task') return;
    expect(result.task.status).toBe('queued');
    const row = await findTaskById(tdb.db, result.task.taskId);
    expect(row?.canonical_run_id).toBe(result.task.runId);
    expect(row?.tool_name).toBe('pkgreg.agents.v1.invoke');
    const done = await until(async () => {
      const r = await findTaskById(tdb.db, result.task.taskId);
      return r?.status === 'completed' ? r : undefined;
    });
    expect(done.result).toMatchObject({ runId: result.task.runId });
  });

  it('sync finishing within the threshold answers mode completed with outputs', async () => {
    nextBehaviour = 'complete';
    // Completed, not promoted to a task: it was answered within the threshold, whatever the clock says.
    const result = await submitInvoke(
      { db: tdb.db, queue, events, syncThresholdMs: 5000 },
      { namespace: NS, clientId: 'c1', args: invokeArgs('quick', 'sync') },
    );
    expect(result).toMatchObject({
      mode: 'completed',
      outputs: [{ type: 'text', text: 'done agent.invoke' }],
    });
  });

  it('sync without QueueEvents (row polling) also completes', async () => {
    nextBehaviour = 'complete';
    const result = await submitInvoke(
      { db: tdb.db, queue, syncThresholdMs: 5000 },
      { namespace: NS, clientId: 'c1', args: invokeArgs('quick', 'sync') },
    );
    expect(result.mode).toBe('completed');
  });

  it('sync past the threshold is promoted to a task that keeps running and completes later', async () => {
    nextBehaviour = 'hold';
    const t0 = Date.now();
    const result = await submitInvoke(
      { db: tdb.db, queue, events, syncThresholdMs: 400 },
      { namespace: NS, clientId: 'c1', args: invokeArgs('slow', 'sync') },
    );
    nextBehaviour = 'complete';
    // Not before the threshold; and not after the run, which is held until the test releases it below.
    expect(Date.now() - t0).toBeGreaterThanOrEqual(380);
    expect(result.mode).toBe('task');
    if (result.mode !== 'task') return;
    expect(result.task.status).toBe('running');
    const { taskId } = result.task;
    await until(async () => gates.get(taskId));
    expect(await rejectReason(getTaskResult(tdb.db, NS, taskId))).toBe('task_not_ready');
    gates.get(taskId)?.();
    const final = await until(async () => {
      const r = await getTaskRecord(tdb.db, NS, taskId);
      return r.status === 'completed' ? r : undefined;
    });
    expect(final.canonicalRunId).toBe(result.task.runId);
  });

  it('a failed sync run answers mode task; tasks/result carries the error', async () => {
    nextBehaviour = 'fail';
    const result = await submitInvoke(
      { db: tdb.db, queue, events, syncThresholdMs: 5000 },
      { namespace: NS, clientId: 'c1', args: invokeArgs('bad', 'sync') },
    );
    nextBehaviour = 'complete';
    expect(result.mode).toBe('task');
    if (result.mode !== 'task') return;
    expect(result.task.status).toBe('failed');
    expect(await getTaskResult(tdb.db, NS, result.task.taskId)).toEqual({
      taskId: result.task.taskId,
      status: 'failed',
      error: { reason: 'agent_failed', message: 'planner refused the input' },
    });
  });
});

describe('submitCompact (mcp-edge.md: compact task support optional)', () => {
  it('sync compact answers mode completed with the outcome fields', async () => {
    nextBehaviour = 'complete';
    const result = await submitCompact(
      { db: tdb.db, queue, events },
      {
        namespace: NS,
        clientId: 'c1',
        args: {
          namespace: NS,
          sourceTier: 'stm',
          strategy: 'summarize',
          maxEntries: 5,
          executionMode: 'sync',
        },
      },
    );
    expect(result).toMatchObject({ mode: 'completed', strategy: 'summarize', sourceEntryIds: [] });
  });

  it('async compact answers a queued task handle for memory.compact', async () => {
    const result = await submitCompact(
      { db: tdb.db, queue, events },
      {
        namespace: NS,
        clientId: 'c1',
        args: {
          namespace: NS,
          sourceTier: 'stm',
          strategy: 'extract_facts',
          maxEntries: 5,
          executionMode: 'async',
        },
      },
    );
    expect(result.mode).toBe('task');
    if (result.mode !== 'task') return;
    const row = await findTaskById(tdb.db, result.task.taskId);
    expect(row?.tool_name).toBe('pkgreg.memory.v1.compact');
    const job = await queue.queue(QUEUES.runtime).getJob(result.task.taskId);
    expect(job?.name).toBe('memory.compact');
  });
});

describe('tasks/get and tasks/result through every state (decisions.md: Tasks)', () => {
  it('queued → running → completed, visible only to its subject', async () => {
    const taskId = await (async () => {
      const r = await submitInvoke(
        { db: tdb.db, queue, events },
        { namespace: NS, clientId: 'c1', args: invokeArgs('states', 'async') },
      );
      if (r.mode !== 'task') throw new Error('expected a task');
      return r.task.taskId;
    })();
    // The worker may pick it up immediately; hold it so running is observable.
    behaviour.set(taskId, 'hold');
    const first = await getTaskRecord(tdb.db, NS, taskId);
    expect(['queued', 'running']).toContain(first.status);
    expect(first.subjectNamespace).toBe(NS);
    expect(first.toolName).toBe('pkgreg.agents.v1.invoke');
    expect(await rejectReason(getTaskResult(tdb.db, NS, taskId))).toBe('task_not_ready');

    await until(async () => gates.get(taskId));
    expect((await getTaskRecord(tdb.db, NS, taskId)).status).toBe('running');
    expect(await rejectReason(getTaskResult(tdb.db, NS, taskId))).toBe('task_not_ready');
    // mcp-edge.md: "Tasks are visible only to the subject that created them."
    expect(await rejectReason(getTaskRecord(tdb.db, OTHER_NS, taskId))).toBe('task_not_found');
    expect(await rejectReason(getTaskResult(tdb.db, OTHER_NS, taskId))).toBe('task_not_found');

    gates.get(taskId)?.();
    const done = await until(async () => {
      const r = await getTaskRecord(tdb.db, NS, taskId);
      return r.status === 'completed' ? r : undefined;
    });
    expect(Date.parse(done.updatedAt)).toBeGreaterThanOrEqual(Date.parse(done.submittedAt));
    const result = await getTaskResult(tdb.db, NS, taskId);
    expect(result).toMatchObject({
      taskId,
      status: 'completed',
      result: { runId: done.canonicalRunId, outputs: [{ type: 'text', text: 'done agent.invoke' }] },
    });
    expect(await rejectReason(getTaskResult(tdb.db, OTHER_NS, taskId))).toBe('task_not_found');
  });

  it('a missing or malformed task id is task_not_found', async () => {
    expect(await rejectReason(getTaskRecord(tdb.db, NS, randomUUID()))).toBe('task_not_found');
    expect(await rejectReason(getTaskRecord(tdb.db, NS, 'not-a-uuid'))).toBe('task_not_found');
    expect(await rejectReason(getTaskResult(tdb.db, NS, 'not-a-uuid'))).toBe('task_not_found');
  });

  it('past maxTaskPollWindowSeconds after it ended a task is task_not_found, then purged', async () => {
    nextBehaviour = 'complete';
    const r = await submitInvoke(
      { db: tdb.db, queue, events },
      { namespace: NS, clientId: 'c1', args: invokeArgs('old', 'sync') },
    );
    expect(r.mode).toBe('completed');
    const row = await tdb.db
      .selectFrom('tasks')
      .selectAll()
      .where('canonical_run_id', '=', r.mode === 'completed' ? r.runId : '')
      .executeTakeFirstOrThrow();
    expect((await getTaskRecord(tdb.db, NS, row.task_id, 300)).status).toBe('completed');
    expect(row.expires_at?.getTime()).toBeGreaterThan(Date.now() + 290_000);
    await tdb.db
      .updateTable('tasks')
      .set({
        finished_at: sql<Date>`now() - interval '301 seconds'`,
        expires_at: sql<Date>`now() - interval '1 second'`,
      })
      .where('task_id', '=', row.task_id)
      .execute();
    expect(await rejectReason(getTaskRecord(tdb.db, NS, row.task_id, 300))).toBe('task_not_found');
    expect(await rejectReason(getTaskResult(tdb.db, NS, row.task_id, 300))).toBe('task_not_found');
    expect(await purgeExpiredTasks(tdb.db)).toBeGreaterThanOrEqual(1);
    expect(await findTaskById(tdb.db, row.task_id)).toBeUndefined();
  });
});

describe('at-least-once delivery (STYLE.md §11: idempotent jobs)', () => {
  it('a duplicate enqueue of the same task id adds no second job', async () => {
    const taskId = randomUUID();
    const payload = {
      taskId,
      runId: randomUUID(),
      namespace: NS,
      agentId: 'engineering.workflow',
      input: { type: 'text' as const, text: 'x' },
    };
    const a = await queue.enqueue('agent.invoke', payload, { delay: 60_000 });
    const b = await queue.enqueue('agent.invoke', payload, { delay: 60_000 });
    expect(a.id).toBe(taskId);
    expect(b.id).toBe(taskId);
    expect(await queue.queue(QUEUES.runtime).getDelayedCount()).toBe(1);
    await queue.queue(QUEUES.runtime).remove(taskId);
  });

  it('the catalog schema rejects a bad payload before it reaches Redis', async () => {
    const bad = { taskId: 'nope', runId: randomUUID(), namespace: NS, agentId: 'x', input: { type: 'text' } };
    // biome-ignore lint/suspicious/noExplicitAny: deliberately malformed payload
    expect(await rejectReason(queue.enqueue('agent.invoke', bad as any))).toBe('request_schema_invalid');
  });

  it('two concurrent completions of one task apply effects once; a late start finds it finished', async () => {
    const taskId = randomUUID();
    const runId = randomUUID();
    await tdb.db
      .insertInto('tasks')
      .values({
        task_id: taskId,
        canonical_run_id: runId,
        tool_name: 'pkgreg.agents.v1.invoke',
        subject_namespace: NS,
        client_id: null,
        input: '{}',
      })
      .execute();
    expect((await startTask(tdb.db, taskId)).state).toBe('started');
    // A redelivery of a stalled job re-enters running (the holder may have died).
    expect((await startTask(tdb.db, taskId)).state).toBe('started');
    let effects = 0;
    const run = () =>
      completeTask(tdb.db, taskId, async (trx) => {
        effects += 1;
        await sql`select pg_sleep(0.1)`.execute(trx);
        return { runId, outputs: [] };
      });
    const outcomes = await Promise.all([run(), run(), run()]);
    expect(outcomes.filter((o) => o.applied)).toHaveLength(1);
    expect(effects).toBe(1);
    expect((await startTask(tdb.db, taskId)).state).toBe('finished');
    expect(await failTask(tdb.db, taskId, { reason: 'x', message: 'y' })).toBe(false);
    const row = await findTaskById(tdb.db, taskId);
    expect(row?.status).toBe('completed');
    expect(row?.attempts).toBe(2);
  });

  it('an open task whose job is gone is failed by the orphan check, never left running', async () => {
    const taskId = randomUUID();
    await tdb.db
      .insertInto('tasks')
      .values({
        task_id: taskId,
        tool_name: 'pkgreg.agents.v1.invoke',
        subject_namespace: NS,
        client_id: null,
        input: '{}',
        status: 'running',
        updated_at: sql<Date>`now() - interval '1 hour'`,
      })
      .execute();
    expect(await failOrphanedTasks(tdb.db, queue, { olderThanSeconds: 600 })).toBeGreaterThanOrEqual(1);
    expect(await getTaskResult(tdb.db, NS, taskId)).toMatchObject({
      status: 'failed',
      error: { reason: 'run_lost' },
    });
  });
});
