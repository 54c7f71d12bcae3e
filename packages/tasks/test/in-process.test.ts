import type { AgentInvokeJob, AgentsInvokeArgs } from '@pkgreg/contracts';
import { createTestDatabase, type TestDatabase } from '@pkgreg/db/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  completeTask,
  getTaskRecord,
  getTaskResult,
  type InProcessHandlers,
  PermanentJobError,
  startInProcessJobs,
  startTask,
  submitInvoke,
  type TaskJobs,
} from '../src/index.js';

// The in-process runner (a local runtime's jobs, no Redis) behind the same TaskJobs as BullMQ's: the
// catalog's attempts and backoff, permanent failures, the sync wait woken by the job's end, and the tasks
// a previous process left unfinished. Real Postgres; the jobs are small handlers on this package's own
// worker-side API, as the agent's (apps' @pkgreg/agents) are.

const NS = `app:${'c'.repeat(64)}`;
let tdb: TestDatabase;
let jobs: TaskJobs;
/** What the next agent.invoke attempt does, by the text of its input. */
const attempts = new Map<string, number>();

const invoke = (text: string, executionMode: 'sync' | 'async' = 'sync'): AgentsInvokeArgs => ({
  agentId: 'engineering.workflow',
  input: { type: 'text', text },
  executionMode,
});

const handlers: InProcessHandlers = {
  'agent.invoke': async (payload: AgentInvokeJob) => {
    const started = await startTask(tdb.db, payload.taskId);
    if (started.state !== 'started') return;
    const text = payload.input.type === 'text' ? payload.input.text : '';
    const n = (attempts.get(text) ?? 0) + 1;
    attempts.set(text, n);
    if (text === 'flaky' && n < 2) throw new Error('transient');
    if (text === 'refused') throw new PermanentJobError('memory_binding_forbidden', 'not for this agent');
    if (text === 'broken') throw new Error('always fails');
    await completeTask(tdb.db, payload.taskId, async () => ({
      runId: payload.runId,
      outputs: [{ type: 'text', text: `done: ${text}` }],
    }));
  },
};

beforeAll(async () => {
  tdb = await createTestDatabase();
  jobs = await startInProcessJobs({ db: tdb.db, handlers, concurrency: 2 });
});
afterAll(async () => {
  await jobs?.close();
  await tdb?.destroy();
});

const deps = () => ({ db: tdb.db, queue: jobs.queue, events: jobs.events, syncThresholdMs: 5000 });

describe('in-process jobs', () => {
  it('a sync invoke is woken by its job and answered completed', async () => {
    const result = await submitInvoke(deps(), { namespace: NS, clientId: null, args: invoke('plan it') });
    expect(result).toMatchObject({ mode: 'completed', outputs: [{ type: 'text', text: 'done: plan it' }] });
  });

  it('a transient failure is retried with the catalog backoff, then completes', async () => {
    const result = await submitInvoke(deps(), { namespace: NS, clientId: null, args: invoke('flaky') });
    expect(result.mode).toBe('completed');
    expect(attempts.get('flaky')).toBe(2);
  });

  it('a permanent failure fails the task once, with its reason', async () => {
    const accepted = await submitInvoke(deps(), { namespace: NS, clientId: null, args: invoke('refused') });
    expect(accepted.mode).toBe('task');
    const taskId = accepted.mode === 'task' ? accepted.task.taskId : '';
    const result = await getTaskResult(tdb.db, NS, taskId);
    expect(result).toMatchObject({ status: 'failed', error: { reason: 'memory_binding_forbidden' } });
    expect(attempts.get('refused')).toBe(1);
  });

  it('the last failed attempt fails the task with a generic run_failed', async () => {
    const accepted = await submitInvoke(deps(), {
      namespace: NS,
      clientId: null,
      args: invoke('broken', 'async'),
    });
    const taskId = accepted.mode === 'task' ? accepted.task.taskId : '';
    for (let i = 0; i < 100 && (await getTaskRecord(tdb.db, NS, taskId)).status !== 'failed'; i += 1) {
      await new Promise((r) => setTimeout(r, 50));
    }
    const result = await getTaskResult(tdb.db, NS, taskId);
    expect(result).toMatchObject({
      status: 'failed',
      error: { reason: 'run_failed', message: 'The run failed' },
    });
    expect(attempts.get('broken')).toBe(3);
  });

  it('refuses a job it does not run and an invalid payload', async () => {
    await expect(jobs.queue.enqueue('tasks.purge-expired', {})).rejects.toThrow(
      /does not run in this process/,
    );
    await expect(
      jobs.queue.enqueue('agent.invoke', { taskId: 'nope' } as unknown as AgentInvokeJob),
    ).rejects.toMatchObject({ reason: 'request_schema_invalid' });
  });

  it('a restart fails the tasks a previous process left unfinished (run_lost)', async () => {
    const held = await startInProcessJobs({
      db: tdb.db,
      handlers: { 'agent.invoke': () => new Promise(() => {}) },
    });
    const accepted = await submitInvoke(
      { db: tdb.db, queue: held.queue, events: held.events },
      { namespace: NS, clientId: null, args: invoke('never ends', 'async') },
    );
    const taskId = accepted.mode === 'task' ? accepted.task.taskId : '';
    expect((await getTaskRecord(tdb.db, NS, taskId)).status).toBe('queued');
    // A new runner on the same database, as after a crash: the old one's job is gone with its process.
    const next = await startInProcessJobs({ db: tdb.db, handlers });
    await next.close();
    expect(await getTaskResult(tdb.db, NS, taskId)).toMatchObject({
      status: 'failed',
      error: { reason: 'run_lost' },
    });
  });
});
