import type { AgentRunSummary } from '@pkgreg/agents';
import { JOB_CATALOG, QUEUES } from '@pkgreg/contracts';
import { type Db, poolOf } from '@pkgreg/db';
import {
  Counter,
  createMetricsRegistry,
  createPoolMetrics,
  createQueueMetrics,
  Histogram,
  JOB_BUCKETS,
  type Logger,
  type Registry,
} from '@pkgreg/server-kit';
import type { RuntimeQueue } from '@pkgreg/tasks';
import type { Job, Worker } from 'bullmq';

// The worker's Prometheus metrics (server-kit metrics.ts; served on METRICS_PORT by index.ts): queue
// depth and oldest waiting job per queue, job runs by queue, name and outcome with their durations,
// indexing runs by trigger and outcome, and the pool.

const QUEUE_NAMES = new Set<string>(Object.values(QUEUES));
const JOB_NAMES = new Set<string>(Object.keys(JOB_CATALOG));

export interface WorkerMetrics {
  readonly registry: Registry;
  /** Counts every run `worker` finishes (completed, or failed: an attempt that will be retried too). */
  watchWorker(worker: Worker): void;
  /** Reports both catalog queues' depth and oldest waiting job on every scrape. */
  watchQueues(queue: RuntimeQueue, logger: Logger): void;
  watchPool(db: Db): void;
  /** Records one model run of the agent: its tokens, steps and outcome. */
  agentRun(run: AgentRunSummary): void;
}

/** A registry.index job's trigger and outcome, from its data and its result (registry-index.ts). */
function indexingOutcome(job: Job, result: unknown): { trigger: string; outcome: string } {
  const trigger = (job.data as { publishRunId?: unknown } | null)?.publishRunId ? 'publish' : 'crawl';
  const status = (result as { status?: unknown; skipped?: unknown } | null | undefined) ?? {};
  const outcome =
    status.status === 'succeeded' || status.status === 'failed'
      ? status.status
      : status.skipped !== undefined
        ? 'skipped'
        : 'failed';
  return { trigger, outcome };
}

export function createWorkerMetrics(registry: Registry = createMetricsRegistry()): WorkerMetrics {
  const pools = createPoolMetrics(registry);
  const runs = new Histogram({
    name: 'pkgreg_job_duration_seconds',
    help: 'BullMQ job runs by queue, job name and outcome (completed, failed), from start to end',
    labelNames: ['queue', 'job', 'outcome'] as const,
    buckets: JOB_BUCKETS,
    registers: [registry],
  });
  const indexing = new Counter({
    name: 'pkgreg_indexing_runs_total',
    help: 'registry.index runs by trigger (crawl, publish) and outcome (succeeded, failed, skipped)',
    labelNames: ['trigger', 'outcome'] as const,
    registers: [registry],
  });
  // The model tool loop (docs/agent.md): tokens by direction and provider, model calls per run, outcomes.
  const agentTokens = new Counter({
    name: 'pkgreg_agent_tokens_total',
    help: 'Model tokens the agent used, by direction (input, output) and provider (openai, anthropic)',
    labelNames: ['direction', 'provider'] as const,
    registers: [registry],
  });
  const agentSteps = new Histogram({
    name: 'pkgreg_agent_steps',
    help: 'Model calls per agent run, by provider',
    labelNames: ['provider'] as const,
    buckets: [1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 50],
    registers: [registry],
  });
  const agentRuns = new Counter({
    name: 'pkgreg_agent_runs_total',
    help: "Agent model runs by outcome: completed, partial (a limit ended it), fallback (the rule planner's plan)",
    labelNames: ['outcome', 'provider'] as const,
    registers: [registry],
  });
  const observe = (queueName: string, job: Job, outcome: 'completed' | 'failed', result: unknown) => {
    const queue = QUEUE_NAMES.has(queueName) ? queueName : 'other';
    const name = JOB_NAMES.has(job.name) ? job.name : 'other';
    const seconds =
      job.processedOn && job.finishedOn ? Math.max(0, (job.finishedOn - job.processedOn) / 1000) : 0;
    runs.observe({ queue, job: name, outcome }, seconds);
    if (job.name === 'registry.index') {
      const run = indexingOutcome(job, result);
      indexing.inc({ trigger: run.trigger, outcome: outcome === 'failed' ? 'failed' : run.outcome });
    }
  };
  // Registered now, so the series exist before the worker's queue is known; read on every scrape.
  let watched: { queue: RuntimeQueue; logger: Logger } | undefined;
  createQueueMetrics(
    registry,
    () => (watched ? [watched.queue.queue(QUEUES.runtime), watched.queue.queue(QUEUES.indexing)] : []),
    (error) => watched?.logger.warn({ err: error }, 'queue metrics unavailable'),
  );

  return {
    registry,
    watchWorker(worker) {
      worker.on('completed', (job, result) => observe(worker.name, job, 'completed', result));
      worker.on('failed', (job) => {
        if (job) observe(worker.name, job, 'failed', undefined);
      });
    },
    watchQueues(queue, logger) {
      watched = { queue, logger };
    },
    watchPool(db) {
      const pool = poolOf(db);
      if (pool) pools.watch('main', pool);
    },
    agentRun(run) {
      agentTokens.inc({ direction: 'input', provider: run.provider }, run.inputTokens);
      agentTokens.inc({ direction: 'output', provider: run.provider }, run.outputTokens);
      agentSteps.observe({ provider: run.provider }, run.steps);
      agentRuns.inc({ outcome: run.outcome, provider: run.provider });
    },
  };
}
