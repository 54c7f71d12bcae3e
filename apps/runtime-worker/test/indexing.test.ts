import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { QUEUES } from '@pkgreg/contracts';
import { testKeyPrefix } from '@pkgreg/db/testing';
import { useTestDatabase } from '@pkgreg/db/vitest';
import { writeDemoRepositories } from '@pkgreg/indexer';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { RuntimeWorker } from '../src/worker.js';
import { createTestWorker, until } from './helpers.js';

// The indexing queue (JOB_CATALOG registry.index / registry.reindex-all) runs @pkgreg/indexer; a local
// git repository is a source too (decisions.md, Registry / Indexing). Permanent failures are not retried.

const prefix = testKeyPrefix('indexing');
const tdb = useTestDatabase();
let worker: RuntimeWorker;
let dir: string;
let repos: string[];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'pkgreg-worker-index-'));
  repos = await writeDemoRepositories(dir);
  worker = createTestWorker(tdb.db, prefix, { concurrency: 1, indexing: true });
});

afterAll(async () => {
  await worker?.close(5000);
  await rm(dir, { recursive: true, force: true });
});

const finished = (jobId: string) =>
  until(
    async () => {
      const job = await worker.queue.queue(QUEUES.indexing).getJob(jobId);
      return job?.finishedOn ? job : undefined;
    },
    `indexing job ${jobId} to finish`,
    30_000,
  );

it('registry.index of a local git repository writes its packages; reindex-all revisits it', async () => {
  const locator = repos[0] ?? '';
  const job = await worker.queue.enqueue(
    'registry.index',
    { kind: 'git', locator },
    { jobId: 'index-demo-0' },
  );
  const done = await finished(job.id ?? '');
  expect(done.returnvalue).toMatchObject({ status: 'succeeded' });
  const count = await tdb.db
    .selectFrom('packages')
    .select(({ fn }) => fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  expect(Number(count.n)).toBeGreaterThan(0);

  const all = await worker.queue.enqueue('registry.reindex-all', {}, { jobId: 'reindex-now' });
  const again = await finished(all.id ?? '');
  expect(again.returnvalue).toMatchObject({ sources: 1, failed: 0 });
});

it('a permanent indexing failure is not retried (UnrecoverableError)', async () => {
  const job = await worker.queue.enqueue(
    'registry.index',
    { kind: 'git', locator: join(dir, 'does-not-exist') },
    { jobId: 'index-missing' },
  );
  const done = await finished(job.id ?? '');
  expect(done.failedReason).toBeTruthy();
  expect(done.attemptsMade).toBe(1);
  expect(await done.getState()).toBe('failed');
});
