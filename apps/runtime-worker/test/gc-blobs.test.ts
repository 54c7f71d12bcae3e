import { QUEUES } from '@pkgreg/contracts';
import { testKeyPrefix } from '@pkgreg/db/testing';
import { useTestDatabase } from '@pkgreg/db/vitest';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { RuntimeWorker } from '../src/worker.js';
import { createTestWorker, until } from './helpers.js';

// docs/versions.md, Storage: the repeatable registry.gc-blobs job deletes blobs no version references.

const prefix = testKeyPrefix('gc-blobs');
const tdb = useTestDatabase();
let worker: RuntimeWorker;

beforeAll(async () => {
  worker = createTestWorker(tdb.db, prefix, {
    indexing: true,
    schedules: { reindexEveryMs: 0, purgeEveryMs: 3_600_000, gcBlobsEveryMs: 3_600_000 },
  });
});

afterAll(async () => {
  for (const queue of [QUEUES.runtime, QUEUES.indexing])
    await worker?.queue.queue(queue).obliterate({ force: true });
  await worker?.close(5000);
});

it('registry.gc-blobs deletes the blobs no version references', async () => {
  await tdb.db
    .insertInto('content_blobs')
    .values({ sha256: 'e'.repeat(64), git_sha1: 'e'.repeat(40), size: 4, bytes: Buffer.from('gone') })
    .execute();
  const job = await worker.queue.enqueue('registry.gc-blobs', {}, { jobId: 'gc-now' });
  const value = await until(
    async () => (await worker.queue.queue(QUEUES.indexing).getJob(job.id ?? ''))?.returnvalue,
  );
  expect(value).toEqual({ blobs: 1, bytes: 4, busy: false });
  expect(await tdb.db.selectFrom('content_blobs').select('sha256').execute()).toEqual([]);
});

it('schedule() registers the repeatable collection on the indexing queue', async () => {
  await worker.schedule();
  await worker.schedule();
  const scheduler = await worker.queue.queue(QUEUES.indexing).getJobScheduler('registry.gc-blobs');
  expect(scheduler?.every).toBe(3_600_000);
  expect(await worker.queue.queue(QUEUES.indexing).getJobSchedulersCount()).toBe(1);
});
