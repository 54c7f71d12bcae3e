import { QUEUES } from '@pkgreg/contracts';
import { createDb, type Db, poolOf } from '@pkgreg/db';
import { TEST_REDIS_URL, testKeyPrefix } from '@pkgreg/db/testing';
import { useTestDatabase } from '@pkgreg/db/vitest';
import { createRuntimeQueue, type RuntimeQueue } from '@pkgreg/tasks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RuntimeWorker } from '../src/worker.js';
import { createTestWorker, until } from './helpers.js';

// A job whose error is classed as a dependency outage waits without using an attempt, but only so
// often: an error that merely looks like an outage and never clears (here a saturated pool's acquire
// timeout) must end the job, not put it back for good.

const prefix = testKeyPrefix('outage-deferral');
const tdb = useTestDatabase();
let saturated: Db;
let held: { release(): void } | undefined;
let worker: RuntimeWorker;
let queue: RuntimeQueue;

beforeAll(async () => {
  // A pool of one connection that the test keeps: every query of the job times out acquiring one.
  // The kept connection opens with the usual timeout (50 ms is too short to open one on a busy
  // machine); only then do acquires get 50 ms (pg-pool reads the option at each acquire).
  saturated = createDb(tdb.url, { max: 1 });
  const pool = poolOf(saturated);
  if (!pool) throw new Error('createDb made no pg pool');
  held = await pool.connect();
  (pool as unknown as { options: { connectionTimeoutMillis: number } }).options.connectionTimeoutMillis = 50;
  worker = createTestWorker(saturated, prefix, { maxOutageDeferrals: 3 });
  queue = createRuntimeQueue({ connection: TEST_REDIS_URL, prefix });
});

afterAll(async () => {
  await worker?.close(5000);
  await queue?.close();
  held?.release();
  await saturated?.destroy();
});

describe('outage deferrals', () => {
  it('counts an outage error that never clears as a failed attempt after the allowed deferrals', async () => {
    const job = await queue.enqueue('tasks.purge-expired', {});
    const runtime = queue.queue(QUEUES.runtime);
    await until(
      async () => (await runtime.getJobState(job.id as string)) === 'failed',
      'the job to fail',
      20_000,
    );
    const failed = await runtime.getJob(job.id as string);
    expect(failed?.failedReason).toMatch(/timeout exceeded when trying to connect/);
    expect(failed?.attemptsMade).toBe(1);
    // The first run and three deferred ones.
    expect(failed?.attemptsStarted).toBe(4);
  });
});
