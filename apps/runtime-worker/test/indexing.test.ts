import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { QUEUES } from '@pkgreg/contracts';
import { createTestDatabase, TEST_REDIS_URL, type TestDatabase, testKeyPrefix } from '@pkgreg/db/testing';
import { writeDemoRepositories } from '@pkgreg/indexer';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createWorker, type RuntimeWorker } from '../src/worker.js';
import { silentLogger, until } from './helpers.js';

// The indexing queue (JOB_CATALOG registry.index / registry.reindex-all) runs @pkgreg/indexer; a local
// git repository is a source too (decisions.md, Registry / Indexing). Permanent failures are not retried.

const prefix = testKeyPrefix('indexing');
let tdb: TestDatabase;
let worker: RuntimeWorker;
let dir: string;
let repos: string[];

beforeAll(async () => {
  tdb = await createTestDatabase();
  dir = await mkdtemp(join(tmpdir(), 'pkgreg-worker-index-'));
  repos = await writeDemoRepositories(dir);
  worker = createWorker({
    db: tdb.db,
    logger: silentLogger,
    connection: TEST_REDIS_URL,
    prefix,
    concurrency: 1,
    indexingConcurrency: 1,
    indexing: true,
    finder: { search: async () => [] },
    model: null,
    indexer: {},
    pollWindowSeconds: 300,
    orphanAfterSeconds: 600,
  });
});

afterAll(async () => {
  await worker?.close(5000);
  await tdb?.destroy();
  await rm(dir, { recursive: true, force: true });
});

const finished = (jobId: string) =>
  until(async () => {
    const job = await worker.queue.queue(QUEUES.indexing).getJob(jobId);
    return job?.finishedOn ? job : undefined;
  }, 30_000);

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
