import { hostname } from 'node:os';
import {
  JOB_CATALOG,
  type JobHandlers,
  type JobName,
  type JobPayload,
  QUEUES,
  type QueueName,
} from '@pkgreg/contracts';
import { dependencyOutageOf, inJobSpan, outageMonitorOf, requestRedisOptions } from '@pkgreg/server-kit';
import {
  connectionOptions,
  createRuntimeQueue,
  failTask,
  type RedisConnection,
  type RuntimeQueue,
  toTaskError,
} from '@pkgreg/tasks';
import { DelayedError, type Job, UnrecoverableError, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { isPermanent } from './jobs/job-errors.js';
import { createJobHandlers, type HandlerDeps, type JobContext } from './jobs/job-handlers.js';
import { createWorkerMetrics, type WorkerMetrics } from './metrics.js';

// BullMQ consumers for the job catalog, following bullmq's going-to-production rules so that a job
// survives retries, crashes and deploys:
// job data validated first, UnrecoverableError for permanent failures, idempotent handlers,
// maxRetriesPerRequest null on worker connections, an error listener, graceful close.
// Any number of these processes can share the queues: each delivery is locked to one worker, and the
// task's check-and-set transitions make a second delivery of the same task a no-op.

export interface WorkerDeps extends Omit<HandlerDeps, 'queue'> {
  connection: RedisConnection;
  prefix: string;
  concurrency: number;
  indexingConcurrency: number;
  /** Consume the indexing queue too. */
  indexing: boolean;
  lockDurationMs?: number;
  stalledIntervalMs?: number;
  maxStalledCount?: number;
  /** Schedules of the repeatable jobs (ms); 0 (or an absent gcBlobsEveryMs) removes the schedule. */
  schedules?: { reindexEveryMs: number; purgeEveryMs: number; gcBlobsEveryMs?: number };
  /**
   * How many times one attempt of a job may be put back for a dependency outage before the error counts
   * as an ordinary failure that uses the attempt (default 180, some minutes of outage).
   */
  maxOutageDeferrals?: number;
  /** Name shown in BullMQ (job.processedBy) and logs. */
  name?: string;
  /** Prometheus metrics (index.ts serves them on METRICS_PORT); a registry of its own when not given. */
  metrics?: WorkerMetrics;
}

export interface RuntimeWorker {
  readonly name: string;
  readonly queue: RuntimeQueue;
  readonly workers: Worker[];
  readonly metrics: WorkerMetrics;
  /** Upserts the repeatable jobs (idempotent: every process may call it). */
  schedule(): Promise<void>;
  /** Stops taking jobs and waits up to `graceMs` for running ones; the rest go back by stalled recovery. */
  close(graceMs?: number): Promise<void>;
}

/** BullMQ's errors for a job whose lock expired while its worker could not reach Redis. */
const LOCK_LOST = /^(could not renew lock for job|Missing lock for job)/;

/** How long a job that met a PostgreSQL or Redis outage waits before it runs again (ms). */
const OUTAGE_RETRY_DELAY_MS = 1_000;

function taskIdOf(data: unknown): string | undefined {
  const id = (data as { taskId?: unknown } | null)?.taskId;
  return typeof id === 'string' ? id : undefined;
}

export function createWorker(deps: WorkerDeps): RuntimeWorker {
  const name = deps.name ?? `${hostname()}-${process.pid}`;
  const queue = createRuntimeQueue({ connection: deps.connection, prefix: deps.prefix });
  const metrics = deps.metrics ?? createWorkerMetrics();
  const handlers: JobHandlers<JobContext> = createJobHandlers({
    ...deps,
    queue,
    onAgentRun: (run) => {
      metrics.agentRun(run);
      deps.onAgentRun?.(run);
    },
  });
  const { db, logger, pollWindowSeconds } = deps;
  const maxOutageDeferrals = deps.maxOutageDeferrals ?? 180;
  const outages = outageMonitorOf(logger);
  // BullMQ's workers say 'ready' once only: a connection of the monitor's own tells when Redis answers
  // again after an outage (their connections' errors tell when it went away).
  const redisWatch =
    typeof deps.connection === 'string'
      ? new Redis(deps.connection, requestRedisOptions())
      : new Redis({ ...deps.connection, ...requestRedisOptions() });
  outages.watchRedis(redisWatch);

  const dispatch = <N extends JobName>(jobName: N, payload: JobPayload<N>, ctx: JobContext) =>
    (handlers[jobName] as (p: JobPayload<N>, c: JobContext) => Promise<unknown>)(payload, ctx);

  const processor = async (job: Job, token?: string) => {
    const jobName = job.name as JobName;
    const definition = JOB_CATALOG[jobName];
    if (!definition) throw new UnrecoverableError(`unknown job ${job.name}`);
    const parsed = definition.schema.safeParse(job.data);
    if (!parsed.success) {
      const taskId = taskIdOf(job.data);
      if (taskId) {
        await failTask(
          db,
          taskId,
          { reason: 'invalid_job', message: 'The job data was invalid' },
          pollWindowSeconds,
        );
      }
      throw new UnrecoverableError(`invalid ${job.name} data`);
    }
    try {
      return await dispatch(jobName, parsed.data as JobPayload<typeof jobName>, { job });
    } catch (error) {
      // A dependency outage is no fault of the job: it runs again once the outage is likely over,
      // without using one of its attempts (handlers are idempotent), so the task still ends properly.
      // Some errors classed as outages are not (a saturated pool's acquire timeout, a reset socket of an
      // endpoint a handler called), so each attempt may be put back only so often: every start that
      // used no attempt was a deferral (or a stall), and each attempt has its own allowance.
      if (token && outages.failed(error)) {
        const deferrals = job.attemptsStarted - job.attemptsMade - 1;
        if (deferrals < maxOutageDeferrals * (job.attemptsMade + 1)) {
          await job.moveToDelayed(Date.now() + OUTAGE_RETRY_DELAY_MS, token);
          throw new DelayedError();
        }
        logger.warn(
          {
            jobId: job.id,
            job: job.name,
            deferrals,
            err: error instanceof Error ? error.message : 'unknown',
          },
          'job put back for an outage too often; the error uses an attempt',
        );
      }
      const permanent = isPermanent(error);
      const lastAttempt = job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
      const taskId = taskIdOf(parsed.data);
      if (taskId && (permanent || lastAttempt)) {
        await failTask(db, taskId, toTaskError(error), pollWindowSeconds);
      }
      if (permanent && !(error instanceof UnrecoverableError)) {
        throw new UnrecoverableError(error instanceof Error ? error.message : 'permanent failure');
      }
      throw error;
    }
  };

  const build = (queueName: QueueName, concurrency: number) => {
    // Each run is a span in the trace of the request that enqueued the job, when tracing is on (tracing.ts).
    const traced: typeof processor = (job, ...rest) =>
      inJobSpan(
        { name: job.name, queue: queueName, id: job.id, attempt: job.attemptsMade + 1 },
        (job.data as { traceContext?: unknown } | null)?.traceContext,
        () => {
          logger.debug({ jobId: job.id, job: job.name }, 'job started');
          return processor(job, ...rest);
        },
      );
    const worker = new Worker(queueName, traced, {
      name,
      // Blocking commands must wait for Redis, not throw after 20 retries (bullmq: going to production).
      connection: connectionOptions(deps.connection, { maxRetriesPerRequest: null }),
      prefix: deps.prefix,
      concurrency,
      lockDuration: deps.lockDurationMs ?? 30_000,
      stalledInterval: deps.stalledIntervalMs ?? 30_000,
      maxStalledCount: deps.maxStalledCount ?? 2,
      autorun: true,
    });
    // Redis down: every connection's every reconnect raises an error; the monitor logs the outage once.
    worker.on('error', (error) => {
      if (dependencyOutageOf(error)) outages.failed(error, 'redis');
      else if (LOCK_LOST.test(error.message)) {
        // Redis was away longer than the lock lasts: the run goes on, and stalled recovery hands the
        // job to a worker again (handlers are idempotent). Expected after an outage, so no stack.
        logger.warn({ queue: queueName, err: error.message }, 'job lock lost; the job will run again');
      } else logger.error({ err: error, queue: queueName }, 'worker error');
    });
    worker.on('failed', (job, error) => {
      if (!job) return;
      // An outage is logged once by the monitor, not for every job it fails.
      if (!outages.failed(error)) {
        logger.warn(
          { jobId: job.id, job: job.name, attemptsMade: job.attemptsMade, err: error.message },
          'job failed',
        );
      }
      const taskId = taskIdOf(job.data);
      if (!taskId) return;
      // A job can also end failed without its processor noticing (stalled past maxStalledCount): make sure
      // its task does not stay open. failTask is a no-op on an ended task.
      void job
        .getState()
        .then((state) =>
          state === 'failed'
            ? failTask(db, taskId, { reason: 'run_failed', message: 'The run failed' }, pollWindowSeconds)
            : false,
        )
        .catch((err: unknown) => {
          if (!outages.failed(err)) logger.error({ err, jobId: job.id }, 'could not record failed task');
        });
    });
    worker.on('completed', (job) =>
      logger.debug({ jobId: job.id, job: job.name, worker: name }, 'job completed'),
    );
    worker.on('stalled', (jobId) => logger.warn({ jobId }, 'job stalled; returned to the queue'));
    return worker;
  };

  const workers = [build(QUEUES.runtime, deps.concurrency)];
  if (deps.indexing) workers.push(build(QUEUES.indexing, deps.indexingConcurrency));
  for (const worker of workers) metrics.watchWorker(worker);
  metrics.watchQueues(queue, logger);
  metrics.watchPool(db);

  return {
    name,
    queue,
    workers,
    metrics,
    async schedule() {
      const s = deps.schedules;
      if (!s) return;
      const upsert = async (
        jobName: 'registry.reindex-all' | 'registry.gc-blobs' | 'tasks.purge-expired',
        every: number,
      ) => {
        const target = queue.queue(JOB_CATALOG[jobName].queue);
        if (every <= 0) {
          await target.removeJobScheduler(jobName);
          return;
        }
        await target.upsertJobScheduler(
          jobName,
          { every },
          {
            name: jobName,
            data: {},
            opts: { attempts: JOB_CATALOG[jobName].attempts, removeOnComplete: 100, removeOnFail: 100 },
          },
        );
      };
      await upsert('tasks.purge-expired', s.purgeEveryMs);
      await upsert('registry.reindex-all', s.reindexEveryMs);
      await upsert('registry.gc-blobs', s.gcBlobsEveryMs ?? 0);
    },
    async close(graceMs = 25_000) {
      let timer: NodeJS.Timeout | undefined;
      const graceful = Promise.all(workers.map((w) => w.close())).then(() => 'closed' as const);
      const timeout = new Promise<'timeout'>((resolve) => {
        timer = setTimeout(() => resolve('timeout'), graceMs);
      });
      const outcome = await Promise.race([graceful, timeout]);
      clearTimeout(timer);
      if (outcome === 'timeout') {
        // Jobs still running keep their lock until it expires; another worker then takes them over.
        logger.warn({ graceMs }, 'running jobs did not finish in time; leaving them to stalled recovery');
        await Promise.all(workers.map((w) => w.close(true)));
      }
      await queue.close();
      redisWatch.disconnect();
    },
  };
}

export {
  createHttpPackageFinder,
  createHttpSkillSource,
  type ModelConfig,
  type PackageFinder,
} from '@pkgreg/agents';
// What an in-process host (tests of other apps) needs besides createWorker.
export { createWorkerMetrics, type WorkerMetrics } from './metrics.js';
