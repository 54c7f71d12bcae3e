import { setTimeout as sleep } from 'node:timers/promises';
import { JOB_CATALOG, type JobName, type JobPayload, RejectError } from '@pkgreg/contracts';
import type { Db } from '@pkgreg/db';
import { PermanentJobError, toTaskError } from './job-errors.js';
import { parseJobPayload } from './job-payload.js';
import type { TaskJobs } from './queue.js';
import { failUnfinishedTasks } from './task.repository.js';
import { failTask } from './task.service.js';
import { createTaskWaiters } from './task-waiters.js';

// Task jobs run in this process instead of a BullMQ worker: a local runtime on a laptop has no Redis.
// Behind the same TaskJobs interface as openQueueJobs, so submitInvoke/submitCompact, their sync wait and
// the task rows work unchanged. The catalog's attempts and backoff apply as in the worker; a permanent
// failure or the last attempt fails the task. Jobs live only in this process: a restart fails the tasks
// a previous process left unfinished (their runs are gone) instead of leaving pollers waiting forever.

/** The jobs this process runs; enqueueing any other job is refused. */
export type InProcessHandlers = { [N in JobName]?: (payload: JobPayload<N>) => Promise<unknown> };

export interface InProcessJobsOptions {
  db: Db;
  handlers: InProcessHandlers;
  /** Jobs running at once; the rest wait in arrival order. Default 4. */
  concurrency?: number;
  pollWindowSeconds?: number;
  /** Told of each failed attempt (the error stays in the log, never in the task). */
  onFailure?: (error: unknown, job: { name: JobName; attempt: number; final: boolean }) => void;
}

interface Pending {
  name: JobName;
  payload: unknown;
  jobId: string | undefined;
}

const isPermanent = (error: unknown) => error instanceof PermanentJobError || error instanceof RejectError;

/** Starts the runner: first fails the tasks a previous process of this database left unfinished. */
export async function startInProcessJobs(options: InProcessJobsOptions): Promise<TaskJobs> {
  const { db, handlers, pollWindowSeconds } = options;
  await failUnfinishedTasks(
    db,
    { reason: 'run_lost', message: 'The run ended without a result' },
    pollWindowSeconds ?? 300,
  );
  const concurrency = options.concurrency ?? 4;
  const waiters = createTaskWaiters();
  const backlog: Pending[] = [];
  /** Job ids scheduled or running: the same id twice is a no-op, as in BullMQ. */
  const known = new Set<string>();
  const running = new Set<Promise<void>>();
  let closed = false;

  async function run(job: Pending): Promise<void> {
    const handler = handlers[job.name] as ((p: unknown) => Promise<unknown>) | undefined;
    const { attempts, backoff } = JOB_CATALOG[job.name];
    const taskId = (job.payload as { taskId?: unknown }).taskId;
    for (let attempt = 1; attempt <= attempts; attempt += 1) {
      try {
        await (handler as (p: unknown) => Promise<unknown>)(job.payload);
        break;
      } catch (error) {
        const final = isPermanent(error) || attempt === attempts || closed;
        options.onFailure?.(error, { name: job.name, attempt, final });
        if (final) {
          if (typeof taskId === 'string') await failTask(db, taskId, toTaskError(error), pollWindowSeconds);
          break;
        }
        const factor = backoff.type === 'exponential' ? 2 ** (attempt - 1) : 1;
        await sleep(backoff.delay * factor);
      }
    }
    if (typeof taskId === 'string') waiters.wake(taskId);
  }

  function pump(): void {
    while (running.size < concurrency && backlog.length > 0) {
      const job = backlog.shift() as Pending;
      const done = run(job)
        .catch((error: unknown) => options.onFailure?.(error, { name: job.name, attempt: 0, final: true }))
        .finally(() => {
          running.delete(done);
          if (job.jobId) known.delete(job.jobId);
          pump();
        });
      running.add(done);
    }
  }

  return {
    queue: {
      async enqueue(name, payload, enqueueOptions = {}) {
        if (closed) throw new Error('the in-process runner is closed');
        if (!handlers[name]) throw new Error(`job ${name} does not run in this process`);
        const data = parseJobPayload(name, payload) as Record<string, unknown>;
        const jobId = enqueueOptions.jobId ?? (typeof data.taskId === 'string' ? data.taskId : undefined);
        if (jobId && known.has(jobId)) return;
        if (jobId) known.add(jobId);
        const job = { name, payload: data, jobId };
        if (enqueueOptions.delay) {
          setTimeout(() => {
            backlog.push(job);
            pump();
          }, enqueueOptions.delay).unref();
        } else {
          backlog.push(job);
          pump();
        }
      },
    },
    events: {
      waitFor: (taskId, timeoutMs) => waiters.waitFor(taskId, timeoutMs),
      async close() {
        waiters.wakeAll();
      },
    },
    /** Runs no new job; waits for the running ones (their tasks end as they would). */
    async close() {
      closed = true;
      backlog.length = 0;
      await Promise.allSettled([...running]);
      waiters.wakeAll();
    },
  };
}
