import type { MemoryCompactResult } from '@pkgreg/contracts';
import { TEST_REDIS_URL, testKeyPrefix } from '@pkgreg/db/testing';
import { useTestDatabase } from '@pkgreg/db/vitest';
import { createEmbedder, type Embedder, insertEntries, putEntry, readEmbeddings } from '@pkgreg/memory';
import {
  createRuntimeQueue,
  createTaskEvents,
  type RuntimeQueue,
  submitCompact,
  type TaskEvents,
} from '@pkgreg/tasks';
import { type EmbeddingsServer, startEmbeddingsServer } from '@pkgreg/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RuntimeWorker } from '../src/worker.js';
import { createTestWorker, until } from './helpers.js';

// memory.embed (docs/decisions.md, Memory search): embeddings computed on write by the worker, against a
// local server speaking OpenAI's embeddings protocol.

const prefix = testKeyPrefix('embed');
const tdb = useTestDatabase();
const KEY = 'sk-worker-test';
let server: EmbeddingsServer;
let embedder: Embedder;
let worker: RuntimeWorker;
let queue: RuntimeQueue;
let events: TaskEvents;
let counter = 0;
const freshNamespace = () => `app:${(++counter).toString(16).padStart(64, 'e')}`;

beforeAll(async () => {
  server = await startEmbeddingsServer({ apiKey: KEY });
  embedder = createEmbedder({ baseUrl: server.url, model: 'embed-test', apiKey: KEY, timeoutMs: 5000 });
  worker = createTestWorker(tdb.db, prefix, { embedder });
  queue = createRuntimeQueue({ connection: TEST_REDIS_URL, prefix });
  events = await createTaskEvents({ connection: TEST_REDIS_URL, prefix });
});

afterAll(async () => {
  await worker?.close(5000);
  await events?.close();
  await queue?.close();
  await server?.close();
});

const stored = async (ids: string[]) => readEmbeddings(tdb.db, ids, 'embed-test', 32);

describe('memory.embed', () => {
  it('embeds the entries it names and stores them beside the entries; job data holds only ids', async () => {
    const ns = freshNamespace();
    const { entry } = await putEntry(tdb.db, ns, {
      namespace: ns,
      tier: 'ltm',
      content: 'postgres is the primary database',
      mode: 'append',
      tags: [],
      metadata: {},
    });
    const job = await queue.enqueue('memory.embed', { namespace: ns, entryIds: [entry.entryId] });
    expect(job.data).toEqual({ namespace: ns, entryIds: [entry.entryId] });
    await until(async () => (await stored([entry.entryId])).size === 1);
    expect(server.requests.at(-1)).toMatchObject({ authorization: `Bearer ${KEY}`, input: [entry.content] });
  });

  it('a compaction is followed by the embedding of what it wrote', async () => {
    const ns = freshNamespace();
    await insertEntries(tdb.db, ns, 'stm', [
      { content: 'The checkout service needs idempotency keys for payment retries.' },
      { content: 'Payment retries double-charge customers without idempotency keys.' },
    ]);
    const result = (await submitCompact(
      { db: tdb.db, queue, events, syncThresholdMs: 15_000 },
      {
        namespace: ns,
        clientId: 'c',
        args: {
          namespace: ns,
          sourceTier: 'stm',
          strategy: 'summarize',
          maxEntries: 10,
          executionMode: 'sync',
        },
      },
    )) as MemoryCompactResult;
    if (result.mode !== 'completed') throw new Error('expected the compaction to complete');
    const created = result.createdEntries.map((e) => e.entryId);
    expect(created).toHaveLength(1);
    await until(async () => (await stored(created)).size === 1);
  });

  it('a refused request (401) fails the job without retries; a 5xx is retried', async () => {
    const ns = freshNamespace();
    const [entry] = await insertEntries(tdb.db, ns, 'ltm', [{ content: 'retry me' }]);
    const id = entry?.entryId as string;
    server.behaviour = 'error';
    server.status = 401;
    const refused = await queue.enqueue('memory.embed', { namespace: ns, entryIds: [id] });
    await until(async () => (await refused.getState()) === 'failed');
    expect((await queue.queue('pkgreg-runtime').getJob(refused.id as string))?.attemptsMade).toBe(1);

    server.status = 503;
    const retried = await queue.enqueue('memory.embed', { namespace: ns, entryIds: [id] });
    await until(
      async () =>
        ((await queue.queue('pkgreg-runtime').getJob(retried.id as string))?.attemptsMade ?? 0) >= 1,
    );
    server.behaviour = 'ok';
    // The catalog's backoff (2 s, exponential) brings it back, and it succeeds.
    await until(async () => (await stored([id])).size === 1, 'the entry to be stored', 20_000);
  }, 30_000);

  it('without an embedding endpoint the job does nothing', async () => {
    const bare = createTestWorker(tdb.db, testKeyPrefix('embed-off'));
    try {
      const ns = freshNamespace();
      const [entry] = await insertEntries(tdb.db, ns, 'ltm', [{ content: 'never embedded' }]);
      const offQueue = createRuntimeQueue({ connection: TEST_REDIS_URL, prefix: bare.queue.prefix });
      const job = await offQueue.enqueue('memory.embed', {
        namespace: ns,
        entryIds: [entry?.entryId as string],
      });
      await until(async () => (await job.getState()) === 'completed');
      expect((await stored([entry?.entryId as string])).size).toBe(0);
      await offQueue.close();
    } finally {
      await bare.close(5000);
    }
  });
});
