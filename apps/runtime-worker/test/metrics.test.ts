import { randomUUID } from 'node:crypto';
import { QUEUES } from '@pkgreg/contracts';
import { TEST_REDIS_URL, testKeyPrefix } from '@pkgreg/db/testing';
import { useTestDatabase } from '@pkgreg/db/vitest';
import { type MetricsServer, startMetricsServer } from '@pkgreg/server-kit';
import { createRuntimeQueue, type RuntimeQueue } from '@pkgreg/tasks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWorkerMetrics } from '../src/metrics.js';
import type { RuntimeWorker } from '../src/worker.js';
import { createTestWorker, silentLogger, until } from './helpers.js';

// Issue 22, "See it": the worker's Prometheus metrics, read by a real scrape of the metrics listener.
// Queue depth and age come from Redis on each scrape; job runs from the worker's own events.

const tdb = useTestDatabase();

async function scrape(server: MetricsServer): Promise<{ text: string; value(series: string): number }> {
  const res = await fetch(`http://127.0.0.1:${server.port}/metrics`);
  expect(res.status).toBe(200);
  const text = await res.text();
  const samples = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const at = line.lastIndexOf(' ');
    samples.set(line.slice(0, at), Number(line.slice(at + 1)));
  }
  return { text, value: (series) => samples.get(series) ?? Number.NaN };
}

describe('queue depth and oldest job age', () => {
  // Nobody consumes these queues: what is added stays where it was put.
  const prefix = testKeyPrefix('metrics-queues');
  let queue: RuntimeQueue;
  let server: MetricsServer;

  beforeAll(async () => {
    queue = createRuntimeQueue({ connection: TEST_REDIS_URL, prefix });
    const metrics = createWorkerMetrics();
    metrics.watchQueues(queue, silentLogger);
    server = await startMetricsServer({
      registry: metrics.registry,
      port: 0,
      host: '127.0.0.1',
      logger: silentLogger,
    });
  });

  afterAll(async () => {
    await server?.close();
    for (const name of Object.values(QUEUES)) await queue?.queue(name).obliterate({ force: true });
    await queue?.close();
  });

  it('reports each queue by state and the age of its oldest waiting job', async () => {
    const empty = await scrape(server);
    expect(empty.value(`pkgreg_queue_jobs{queue="${QUEUES.runtime}",state="waiting"}`)).toBe(0);
    expect(empty.value(`pkgreg_queue_oldest_waiting_job_age_seconds{queue="${QUEUES.runtime}"}`)).toBe(0);

    const runtime = queue.queue(QUEUES.runtime);
    // Created two minutes ago (BullMQ's own timestamp option), then two fresh ones and a delayed one.
    await runtime.add('tasks.purge-expired', {}, { jobId: randomUUID(), timestamp: Date.now() - 120_000 });
    await runtime.add('tasks.purge-expired', {}, { jobId: randomUUID() });
    await runtime.add('tasks.purge-expired', {}, { jobId: randomUUID() });
    await runtime.add('tasks.purge-expired', {}, { jobId: randomUUID(), delay: 3_600_000 });
    await queue.queue(QUEUES.indexing).add('registry.reindex-all', {}, { jobId: randomUUID() });

    const { value, text } = await scrape(server);
    expect(value(`pkgreg_queue_jobs{queue="${QUEUES.runtime}",state="waiting"}`)).toBe(3);
    expect(value(`pkgreg_queue_jobs{queue="${QUEUES.runtime}",state="delayed"}`)).toBe(1);
    expect(value(`pkgreg_queue_jobs{queue="${QUEUES.runtime}",state="active"}`)).toBe(0);
    expect(value(`pkgreg_queue_jobs{queue="${QUEUES.indexing}",state="waiting"}`)).toBe(1);
    const age = value(`pkgreg_queue_oldest_waiting_job_age_seconds{queue="${QUEUES.runtime}"}`);
    expect(age).toBeGreaterThanOrEqual(120);
    expect(age).toBeLessThan(3600);
    expect(value(`pkgreg_queue_oldest_waiting_job_age_seconds{queue="${QUEUES.indexing}"}`)).toBeLessThan(
      120,
    );
    // The key prefix (a tenant's, here the test file's) is never a label value.
    expect(text).not.toContain(prefix);
  });
});

describe('job runs and indexing outcomes', () => {
  const prefix = testKeyPrefix('metrics-runs');
  let worker: RuntimeWorker;
  let server: MetricsServer;

  beforeAll(async () => {
    worker = createTestWorker(tdb.db, prefix, { indexing: true });
    server = await startMetricsServer({
      registry: worker.metrics.registry,
      port: 0,
      host: '127.0.0.1',
      logger: silentLogger,
    });
  });

  afterAll(async () => {
    await server?.close();
    for (const name of Object.values(QUEUES)) await worker?.queue.queue(name).obliterate({ force: true });
    await worker?.close(5000);
  });

  it('counts runs by queue, job and outcome, with their duration, and indexing runs by outcome', async () => {
    await worker.queue.enqueue('tasks.purge-expired', {}, { jobId: randomUUID() });
    // Data the catalog schema refuses: the run fails for good.
    await worker.queue.queue(QUEUES.runtime).add('agent.invoke', { nonsense: true }, { jobId: randomUUID() });
    await worker.queue.enqueue(
      'registry.index',
      { kind: 'git', locator: `/nonexistent/${randomUUID()}` },
      { jobId: randomUUID() },
    );

    const completed = `pkgreg_job_duration_seconds_count{queue="${QUEUES.runtime}",job="tasks.purge-expired",outcome="completed"}`;
    const failed = `pkgreg_job_duration_seconds_count{queue="${QUEUES.runtime}",job="agent.invoke",outcome="failed"}`;
    const indexing = 'pkgreg_indexing_runs_total{trigger="crawl",outcome="failed"}';
    const { value, text } = await until(async () => {
      const s = await scrape(server);
      return s.value(completed) === 1 && s.value(failed) === 1 && s.value(indexing) >= 1 ? s : undefined;
    });
    expect(value(completed.replace('_count', '_sum'))).toBeGreaterThanOrEqual(0);
    expect(value(`pkgreg_db_pool_max_connections{pool="main"}`)).toBeGreaterThan(0);
    expect(text).not.toContain('nonexistent');
  });
});
