import { randomUUID } from 'node:crypto';
import { createHttpPackageFinder } from '@pkgreg/agents';
import { QUEUES } from '@pkgreg/contracts';
import { TEST_REDIS_URL, testKeyPrefix } from '@pkgreg/db/testing';
import { useTestDatabase } from '@pkgreg/db/vitest';
import {
  createRuntimeQueue,
  createTaskEvents,
  findTaskById,
  getTaskResult,
  type RuntimeQueue,
  submitInvoke,
  type TaskEvents,
} from '@pkgreg/tasks';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  type ChildHandle,
  createTestWorker,
  startModelServer,
  startWorkerProcess,
  until,
} from './helpers.js';

// STYLE.md §11 and decisions.md (Tasks): BullMQ delivers at least once, workers die, several share a
// queue. Whatever happens, a task ends completed or failed, never stays open, and its effect (the stm
// record of the run) lands exactly once. The worker runs as the built entry (dist/index.js).

const NS = `app:${'d'.repeat(64)}`;
const prefix = testKeyPrefix('resilience');
const BINDING = { namespace: NS, readTiers: [], writeTiers: ['stm' as const] };

const tdb = useTestDatabase();
let queue: RuntimeQueue;
let events: TaskEvents;
let model: Awaited<ReturnType<typeof startModelServer>>;
const children: ChildHandle[] = [];

function workerEnv(extra: Record<string, string> = {}): Record<string, string> {
  return {
    DATABASE_URL: tdb.url,
    REDIS_URL: TEST_REDIS_URL,
    QUEUE_PREFIX: prefix,
    WORKER_CONCURRENCY: '4',
    // Short locks so a killed worker's job is recovered within seconds (production: 30 s).
    LOCK_DURATION_MS: '2000',
    STALLED_INTERVAL_MS: '500',
    MAX_STALLED_COUNT: '2',
    REINDEX_EVERY_MS: '0',
    PURGE_EVERY_MS: '3600000',
    // Nothing listens here: the planner degrades to a plan without packages, fast.
    REGISTRY_URL: 'http://127.0.0.1:9',
    MODEL_BASE_URL: model.url,
    MODEL_TIMEOUT_MS: '20000',
    SHUTDOWN_GRACE_MS: '10000',
    ...extra,
  };
}

async function startWorker(extra: Record<string, string> = {}): Promise<ChildHandle> {
  const handle = startWorkerProcess(workerEnv(extra));
  children.push(handle);
  await until(
    async () => {
      if (handle.child.exitCode !== null) throw new Error(`worker exited: ${handle.output()}`);
      return handle.output().includes('runtime-worker started');
    },
    'the worker to start',
    20_000,
  );
  return handle;
}

async function submitAsync(text: string): Promise<{ taskId: string; runId: string }> {
  const result = await submitInvoke(
    { db: tdb.db, queue, events },
    {
      namespace: NS,
      clientId: 'c',
      args: {
        agentId: 'engineering.workflow',
        input: { type: 'text', text },
        memory: BINDING,
        executionMode: 'async',
      },
    },
  );
  if (result.mode !== 'task') throw new Error('expected a task');
  return { taskId: result.task.taskId, runId: result.task.runId };
}

async function stmRecordsOf(runId: string): Promise<number> {
  const rows = await tdb.db
    .selectFrom('memory_entries')
    .select('entry_id')
    .where('namespace', '=', NS)
    .where('tier', '=', 'stm')
    .where(({ ref, val, eb }) => eb(ref('metadata', '->>').key('runId'), '=', val(runId)))
    .execute();
  return rows.length;
}

const ended = (taskId: string) =>
  until(
    async () => {
      const row = await findTaskById(tdb.db, taskId);
      return row && (row.status === 'completed' || row.status === 'failed') ? row : undefined;
    },
    `task ${taskId} to end`,
    30_000,
  );

beforeAll(async () => {
  queue = createRuntimeQueue({ connection: TEST_REDIS_URL, prefix });
  events = await createTaskEvents({ connection: TEST_REDIS_URL, prefix });
  model = await startModelServer('ok');
});

afterEach(async () => {
  await Promise.all(children.splice(0).map((c) => c.stop('SIGKILL')));
});

afterAll(async () => {
  await events?.close();
  await queue?.close();
  await model?.close();
});

describe('worker process killed mid-run (stalled-job recovery)', () => {
  it('SIGKILL while the run waits on the model: another worker finishes it, effect once', async () => {
    model.set('slow', 4000);
    const a = await startWorker();
    const requested = model.nextRequest();
    const { taskId, runId } = await submitAsync('First design the schema, then write integration tests.');
    await requested;
    expect((await findTaskById(tdb.db, taskId))?.status).toBe('running');
    await a.stop('SIGKILL');
    model.set('ok');

    const b = await startWorker();
    const row = await ended(taskId);
    expect(row.status).toBe('completed');
    // At least two deliveries (the killed one and the recovery; a loaded box may stall one more), one effect.
    expect(row.attempts).toBeGreaterThanOrEqual(2);
    expect(await stmRecordsOf(runId)).toBe(1);
    const result = await getTaskResult(tdb.db, NS, taskId);
    expect(result).toMatchObject({ status: 'completed', result: { runId } });
    // The recovering worker completed it; the killed one started it and never completed it. BullMQ's
    // completed event (the log line) comes after the processor has ended the task row: wait for it.
    const completedBy = (h: ChildHandle) =>
      h
        .output()
        .split('\n')
        .some((line) => line.includes('"msg":"job completed"') && line.includes(taskId));
    await until(async () => completedBy(b), 'worker b to complete it', 10_000);
    expect(completedBy(a)).toBe(false);
    expect(a.output()).toContain(taskId);
  });
});

describe('two worker processes share the queue', () => {
  it('every task runs once to effect and both workers take work', async () => {
    const [w1, w2] = await Promise.all([startWorker(), startWorker()]);
    // Repeatable jobs: both processes upserted the same scheduler, so there is one of it.
    const schedulers = await queue.queue(QUEUES.runtime).getJobSchedulers();
    expect(
      schedulers.filter((s) => s.key === 'tasks.purge-expired' || s.name === 'tasks.purge-expired'),
    ).toHaveLength(1);
    expect(await queue.queue(QUEUES.indexing).getJobSchedulersCount()).toBe(0);
    // Each run takes ~150 ms (the model answers slowly), so one worker cannot drain the queue alone.
    model.set('slow', 150);
    const submitted = await Promise.all(
      Array.from({ length: 24 }, (_, i) =>
        submitAsync(`Design the service ${i}, then deploy it to Kubernetes.`),
      ),
    );
    for (const { taskId } of submitted) expect((await ended(taskId)).status).toBe('completed');
    for (const { runId } of submitted) expect(await stmRecordsOf(runId)).toBe(1);
    const completedBy = (w: ChildHandle | undefined, taskId: string) =>
      new RegExp(`"jobId":"${taskId}"[^\n]*"msg":"job completed"`).test(w?.output() ?? '');
    const byW1 = submitted.filter((t) => completedBy(w1, t.taskId)).length;
    const byW2 = submitted.filter((t) => completedBy(w2, t.taskId)).length;
    expect(byW1 + byW2).toBe(24);
    expect(byW1).toBeGreaterThan(0);
    expect(byW2).toBeGreaterThan(0);
  });
});

describe('SIGTERM closes gracefully', () => {
  it('a running job finishes before the process exits 0', async () => {
    model.set('slow', 1500);
    const w = await startWorker();
    const requested = model.nextRequest();
    const { taskId, runId } = await submitAsync('Write the changelog and publish the package to npm.');
    await requested;
    const exit = w.stop('SIGTERM');
    expect(await exit).toBe(0);
    const row = await findTaskById(tdb.db, taskId);
    // Finished by this process before it exited, not left for another worker.
    expect(row?.status).toBe('completed');
    expect(w.output()).toMatch(new RegExp(`"jobId":"${taskId}"[^\n]*"msg":"job completed"`));
    expect(await stmRecordsOf(runId)).toBe(1);
    model.set('ok');
  });
});

describe('duplicate deliveries (at-least-once)', () => {
  it('the same task delivered twice at once, and again after it ended, has one effect', async () => {
    // Slow enough that both deliveries are inside the run at the same time.
    model.set('slow', 300);
    const worker = createTestWorker(tdb.db, prefix, {
      finder: createHttpPackageFinder('http://127.0.0.1:9', 200),
      model: { baseUrl: model.url, model: 'm', timeoutMs: 5000 },
    });
    try {
      const taskId = randomUUID();
      const runId = randomUUID();
      await tdb.db
        .insertInto('tasks')
        .values({
          task_id: taskId,
          canonical_run_id: runId,
          tool_name: 'pkgreg.agents.v1.invoke',
          subject_namespace: NS,
          client_id: 'c',
          input: '{}',
        })
        .execute();
      const payload = {
        taskId,
        runId,
        namespace: NS,
        agentId: 'engineering.workflow',
        input: { type: 'text' as const, text: 'Design the API, then test it.' },
        memory: BINDING,
      };
      // Two deliveries of one task (as after a stall), under distinct BullMQ ids so both run.
      const runtime = queue.queue(QUEUES.runtime);
      await Promise.all([
        runtime.add('agent.invoke', payload, { jobId: `${taskId}-a` }),
        runtime.add('agent.invoke', payload, { jobId: `${taskId}-b` }),
      ]);
      const row = await ended(taskId);
      expect(row.status).toBe('completed');
      // Both deliveries entered the run…
      expect(row.attempts).toBe(2);
      await until(async () => ((await runtime.getJobCounts('completed')).completed ?? 0) >= 2 || undefined);
      expect(await stmRecordsOf(runId)).toBe(1);

      // A late redelivery after completion is a no-op.
      const late = await runtime.add('agent.invoke', payload, { jobId: `${taskId}-c` });
      const value = await until(async () => (await runtime.getJob(late.id ?? ''))?.returnvalue);
      expect(value).toEqual({ skipped: 'finished' });
      expect(await stmRecordsOf(runId)).toBe(1);
      expect((await findTaskById(tdb.db, taskId))?.result).toEqual(row.result);
    } finally {
      await worker.close(5000);
    }
  });

  it('invalid job data fails the task permanently (UnrecoverableError, no retries)', async () => {
    const worker = createTestWorker(tdb.db, prefix, { concurrency: 1 });
    try {
      const taskId = randomUUID();
      await tdb.db
        .insertInto('tasks')
        .values({
          task_id: taskId,
          tool_name: 'pkgreg.agents.v1.invoke',
          subject_namespace: NS,
          client_id: 'c',
          input: '{}',
        })
        .execute();
      const job = await queue
        .queue(QUEUES.runtime)
        .add('agent.invoke', { taskId, namespace: 'not-a-namespace' }, { jobId: taskId, attempts: 3 });
      const row = await ended(taskId);
      expect(row.status).toBe('failed');
      expect(row.error).toEqual({ reason: 'invalid_job', message: 'The job data was invalid' });
      const failed = await until(async () => {
        const j = await queue.queue(QUEUES.runtime).getJob(job.id ?? '');
        return j?.finishedOn ? j : undefined;
      });
      expect(failed.attemptsMade).toBe(1);
    } finally {
      await worker.close(5000);
    }
  });
});
