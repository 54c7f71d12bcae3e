import { randomUUID } from 'node:crypto';
import { QUEUES } from '@pkgreg/contracts';
import { testKeyPrefix } from '@pkgreg/db/testing';
import { useTestDatabase } from '@pkgreg/db/vitest';
import { findTaskById } from '@pkgreg/tasks';
import { sql } from 'kysely';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { RuntimeWorker } from '../src/worker.js';
import { createTestWorker, until } from './helpers.js';

// decisions.md, Tasks: a task stays pollable for maxTaskPollWindowSeconds after it ends; the repeatable
// tasks.purge-expired job removes it afterwards, fails tasks whose job is lost, and sweeps idempotency
// records past their 24 h.

const NS = `app:${'e'.repeat(64)}`;
const prefix = testKeyPrefix('purge');
const tdb = useTestDatabase();
let worker: RuntimeWorker;

beforeAll(async () => {
  worker = createTestWorker(tdb.db, prefix, {
    concurrency: 2,
    orphanAfterSeconds: 60,
    schedules: { reindexEveryMs: 0, purgeEveryMs: 3_600_000 },
  });
});

afterAll(async () => {
  await worker?.queue.queue(QUEUES.runtime).obliterate({ force: true });
  await worker?.close(5000);
});

it('tasks.purge-expired purges ended tasks past the window, fails lost ones, keeps the rest', async () => {
  const [expired, fresh, lost, waiting] = [randomUUID(), randomUUID(), randomUUID(), randomUUID()];
  const base = { tool_name: 'pkgreg.agents.v1.invoke', subject_namespace: NS, client_id: 'c', input: '{}' };
  await tdb.db
    .insertInto('tasks')
    .values([
      {
        ...base,
        task_id: expired,
        status: 'completed',
        finished_at: sql`now() - interval '10 minutes'`,
        expires_at: sql`now() - interval '5 minutes'`,
      },
      {
        ...base,
        task_id: fresh,
        status: 'completed',
        finished_at: sql`now()`,
        expires_at: sql`now() + interval '5 minutes'`,
      },
      // Open for an hour with no job in the queue: its run is lost.
      { ...base, task_id: lost, status: 'running', updated_at: sql`now() - interval '1 hour'` },
      // Open as long, but its job is still waiting (a backlog, not a loss).
      { ...base, task_id: waiting, status: 'queued', updated_at: sql`now() - interval '1 hour'` },
    ])
    .execute();
  await worker.queue
    .queue(QUEUES.runtime)
    .add('agent.invoke', { taskId: waiting }, { jobId: waiting, delay: 3_600_000 });
  await tdb.db
    .insertInto('idempotency_records')
    .values([
      {
        subject_namespace: NS,
        tool_name: 't',
        idempotency_key: 'old',
        request_hash: 'h',
        expires_at: sql`now() - interval '1 minute'` as never,
      },
      {
        subject_namespace: NS,
        tool_name: 't',
        idempotency_key: 'new',
        request_hash: 'h',
        expires_at: sql`now() + interval '1 hour'` as never,
      },
    ])
    .execute();

  const job = await worker.queue.enqueue('tasks.purge-expired', {}, { jobId: 'purge-now' });
  const value = await until(
    async () => (await worker.queue.queue(QUEUES.runtime).getJob(job.id ?? ''))?.returnvalue,
  );
  expect(value).toMatchObject({ purged: 1, orphaned: 1, idempotencyRecords: 1 });
  expect(await findTaskById(tdb.db, expired)).toBeUndefined();
  expect((await findTaskById(tdb.db, fresh))?.status).toBe('completed');
  expect((await findTaskById(tdb.db, lost))?.status).toBe('failed');
  expect((await findTaskById(tdb.db, lost))?.error).toEqual({
    reason: 'run_lost',
    message: 'The run ended without a result',
  });
  expect((await findTaskById(tdb.db, waiting))?.status).toBe('queued');
  const keys = await tdb.db.selectFrom('idempotency_records').select('idempotency_key').execute();
  expect(keys.map((k) => k.idempotency_key)).toEqual(['new']);
});

it('schedule() registers the repeatable purge job once, however often it is called', async () => {
  await worker.schedule();
  await worker.schedule();
  const scheduler = await worker.queue.queue(QUEUES.runtime).getJobScheduler('tasks.purge-expired');
  expect(scheduler?.every).toBe(3_600_000);
  expect(await worker.queue.queue(QUEUES.runtime).getJobSchedulersCount()).toBe(1);
});
