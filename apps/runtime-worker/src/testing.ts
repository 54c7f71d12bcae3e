import type { Db } from '@pkgreg/db';
import { TEST_REDIS_URL } from '@pkgreg/db/testing';
import { createLogger } from '@pkgreg/server-kit';
import { createWorker, type RuntimeWorker, type WorkerDeps } from './worker.js';

// For tests, this package's and other apps' (`@pkgreg/runtime-worker/testing`): a real worker in the
// test's process, on its database and queue prefix.

export const silentLogger = createLogger('runtime-worker-test', 'silent');

/**
 * A worker in this process on the test database and the file's queue prefix, with what the tests share:
 * 4 runtime jobs at once, no indexing queue, no registry to search, no model. `overrides` sets the rest.
 */
export function createTestWorker(db: Db, prefix: string, overrides: Partial<WorkerDeps> = {}): RuntimeWorker {
  return createWorker({
    db,
    logger: silentLogger,
    connection: TEST_REDIS_URL,
    prefix,
    concurrency: 4,
    indexingConcurrency: 1,
    indexing: false,
    finder: { search: async () => [] },
    model: null,
    indexer: {},
    pollWindowSeconds: 300,
    orphanAfterSeconds: 600,
    ...overrides,
  });
}
