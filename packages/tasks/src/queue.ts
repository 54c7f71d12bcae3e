import { JOB_CATALOG, type JobName, type JobPayload, QUEUES, type QueueName } from '@pkgreg/contracts';
import { injectTraceContext } from '@pkgreg/server-kit';
import { type ConnectionOptions, type Job, Queue, QueueEvents } from 'bullmq';
import { parseJobPayload } from './job-payload.js';
import { createTaskWaiters } from './task-waiters.js';

// Producer side of the job catalog. Job data carries ids and validated arguments
// only, never a token or secret; the task id is the job id so a duplicate enqueue adds nothing.
// When tracing is on it also carries the enqueuing request's W3C trace context (`traceContext`), so the
// worker's run joins that request's trace; the catalog schemas drop it before a handler sees the payload.

/** A Redis URL, or ioredis-style options (host, port, password, db, tls…). */
export type RedisConnection = string | Exclude<ConnectionOptions, { connect: unknown }>;

export interface RuntimeQueueOptions {
  connection: RedisConnection;
  /** BullMQ key prefix: hosted tenants and test files get their own. */
  prefix?: string;
  /** Finished jobs kept in Redis (the task row is the durable record). */
  keepCompleted?: { age: number; count: number };
  keepFailed?: { age: number; count: number };
}

export interface EnqueueOptions {
  /** Defaults to the payload's taskId for task jobs; required to dedupe other jobs. */
  jobId?: string;
  delay?: number;
}

/** Where a task's job is handed to run: BullMQ (createRuntimeQueue) or this process (in-process.ts). */
export interface TaskQueue {
  /** Validates `payload` with the catalog schema and schedules the job; same job id twice is a no-op. */
  enqueue<N extends JobName>(name: N, payload: JobPayload<N>, options?: EnqueueOptions): Promise<unknown>;
}

/** What a runtime submits tasks through: the queue, the events that wake a sync wait, and their close. */
export interface TaskJobs {
  queue: TaskQueue;
  /** Without events a sync wait polls the task row: slower, still correct. */
  events?: TaskEvents;
  close(): Promise<void>;
}

export interface RuntimeQueue extends TaskQueue {
  readonly prefix: string;
  /** The BullMQ queue behind a catalog queue name. */
  queue(name: QueueName): Queue;
  enqueue<N extends JobName>(name: N, payload: JobPayload<N>, options?: EnqueueOptions): Promise<Job>;
  close(): Promise<void>;
}

export const DEFAULT_QUEUE_PREFIX = 'pkgreg';
const KEEP_COMPLETED = { age: 3600, count: 1000 };
const KEEP_FAILED = { age: 7 * 24 * 3600, count: 5000 };

/**
 * Reconnects at least every second: BullMQ's own strategy backs off to 20 s, so after an outage of a
 * few seconds workers and producers would resume up to 20 s after Redis was back.
 */
const reconnectEverySecond = (times: number) => Math.min(times * 100, 1_000);

export function connectionOptions(
  connection: RedisConnection,
  overrides: Record<string, unknown> = {},
): ConnectionOptions {
  return typeof connection === 'string'
    ? { url: connection, retryStrategy: reconnectEverySecond, ...overrides }
    : ({ retryStrategy: reconnectEverySecond, ...connection, ...overrides } as ConnectionOptions);
}

export function createRuntimeQueue(options: RuntimeQueueOptions): RuntimeQueue {
  const prefix = options.prefix ?? DEFAULT_QUEUE_PREFIX;
  // Producers fail fast when Redis is down (the caller answers an error) instead of queueing commands.
  const connection = connectionOptions(options.connection, { enableOfflineQueue: false });
  const queues = new Map<QueueName, Queue>();
  for (const name of Object.values(QUEUES)) {
    const queue = new Queue(name, {
      connection,
      prefix,
      defaultJobOptions: {
        removeOnComplete: options.keepCompleted ?? KEEP_COMPLETED,
        removeOnFail: options.keepFailed ?? KEEP_FAILED,
      },
    });
    // Connection errors surface on the enqueue call; without a listener they would crash the process.
    queue.on('error', () => {});
    queues.set(name, queue);
  }
  const get = (name: QueueName): Queue => {
    const queue = queues.get(name);
    if (!queue) throw new Error(`unknown queue ${name}`);
    return queue;
  };

  return {
    prefix,
    queue: get,
    async enqueue(name, payload, enqueueOptions = {}) {
      const definition = JOB_CATALOG[name];
      const data = parseJobPayload(name, payload) as Record<string, unknown>;
      const jobId = enqueueOptions.jobId ?? (typeof data.taskId === 'string' ? data.taskId : undefined);
      const traceContext = injectTraceContext();
      return get(definition.queue).add(name, traceContext ? { ...data, traceContext } : data, {
        ...(jobId ? { jobId } : {}),
        ...(enqueueOptions.delay ? { delay: enqueueOptions.delay } : {}),
        attempts: definition.attempts,
        backoff: definition.backoff,
      });
    },
    async close() {
      await Promise.all([...queues.values()].map((q) => q.close()));
    },
  };
}

/** Wakes waiters when a runtime job finishes; the waiter then re-reads the task row (the truth). */
export interface TaskEvents {
  /** Resolves on the next completed/failed event of `taskId`'s job, or after `timeoutMs`. */
  waitFor(taskId: string, timeoutMs: number): { promise: Promise<void>; cancel(): void };
  close(): Promise<void>;
}

export async function createTaskEvents(options: {
  connection: RedisConnection;
  prefix?: string;
}): Promise<TaskEvents> {
  const events = new QueueEvents(QUEUES.runtime, {
    // QueueEvents blocks on XREAD: its connection must retry forever rather than throw.
    connection: connectionOptions(options.connection, { maxRetriesPerRequest: null }),
    prefix: options.prefix ?? DEFAULT_QUEUE_PREFIX,
  });
  events.on('error', () => {});
  const waiters = createTaskWaiters();
  const wake = ({ jobId }: { jobId: string }) => waiters.wake(jobId);
  events.on('completed', wake);
  events.on('failed', wake);
  await events.waitUntilReady();

  return {
    waitFor: (taskId, timeoutMs) => waiters.waitFor(taskId, timeoutMs),
    async close() {
      waiters.wakeAll();
      await events.close();
    },
  };
}

/** The BullMQ queue and task events of `prefix` as TaskJobs (the edge's development and hosted runtimes). */
export async function openQueueJobs(options: {
  connection: RedisConnection;
  prefix?: string;
}): Promise<TaskJobs> {
  const queue = createRuntimeQueue(options);
  const events = await createTaskEvents(options).catch(() => undefined);
  return {
    queue,
    ...(events ? { events } : {}),
    async close() {
      await Promise.allSettled([queue.close(), events?.close()]);
    },
  };
}
