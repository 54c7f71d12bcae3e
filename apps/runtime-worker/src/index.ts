import { createHttpPackageFinder, createHttpSkillSource } from '@pkgreg/agents';
import { agentLimitsFromEnv } from '@pkgreg/contracts';
import { indexerSettings } from '@pkgreg/indexer';
import { memorySettings } from '@pkgreg/memory';
import { startService } from '@pkgreg/server-kit';
import { delegationSettings, loadEnv, modelConfig } from './env.js';
import { startHealthServer } from './health-server.js';
import { createDelegatedReads } from './jobs/delegated-reads.js';
import { createWorkerMetrics } from './metrics.js';
import { createWorker } from './worker.js';

const env = loadEnv();
// Logger, traces, outage watch, metrics registry; the pool opened through it closes on shutdown.
const service = await startService('runtime-worker', env);
const { logger } = service;
// bullmq, going to production: an unexpected error must be logged, not lost. After an uncaught exception
// the process state is unknown, so it exits; its running jobs come back through stalled recovery.
process.on('unhandledRejection', (reason) => logger.error({ err: reason }, 'unhandled rejection'));
process.on('uncaughtException', (error) => {
  logger.fatal({ err: error }, 'uncaught exception');
  process.exit(1);
});
const db = service.openDb(env.DATABASE_URL, {
  applicationName: 'pkgreg-runtime-worker',
  ...(env.DATABASE_SCHEMA ? { schema: env.DATABASE_SCHEMA } : {}),
  // Each concurrent job holds at most one connection at a time (reads, then its completion transaction).
  max: Math.min(env.WORKER_CONCURRENCY + env.INDEXING_CONCURRENCY + 2, 50),
});

const metrics = createWorkerMetrics(service.metrics);
const worker = createWorker({
  metrics,
  db,
  logger,
  connection: env.REDIS_URL,
  prefix: env.QUEUE_PREFIX,
  concurrency: env.WORKER_CONCURRENCY,
  indexingConcurrency: env.INDEXING_CONCURRENCY,
  indexing: env.INDEXING_ENABLED,
  lockDurationMs: env.LOCK_DURATION_MS,
  stalledIntervalMs: env.STALLED_INTERVAL_MS,
  maxStalledCount: env.MAX_STALLED_COUNT,
  maxOutageDeferrals: env.OUTAGE_MAX_DEFERRALS,
  pollWindowSeconds: env.TASK_POLL_WINDOW_SECONDS,
  orphanAfterSeconds: env.ORPHAN_AFTER_SECONDS,
  schedules: {
    reindexEveryMs: env.INDEXING_ENABLED ? env.REINDEX_EVERY_MS : 0,
    purgeEveryMs: env.PURGE_EVERY_MS,
    gcBlobsEveryMs: env.INDEXING_ENABLED ? env.GC_BLOBS_EVERY_MS : 0,
  },
  finder: createHttpPackageFinder(env.REGISTRY_URL, env.REGISTRY_TIMEOUT_MS),
  model: modelConfig(env),
  // The model's tool loop reads skills from the same registry API: as the caller's person when the job
  // names one, else anonymously (docs/agent.md, "Privacy").
  skills: env.AGENT_TOOL_LOOP ? createHttpSkillSource(env.REGISTRY_URL, env.REGISTRY_TIMEOUT_MS) : null,
  assertionsFor: createDelegatedReads(db, delegationSettings(env), logger),
  limits: agentLimitsFromEnv(env),
  indexer: indexerSettings(env),
  embedder: memorySettings(env).embedder,
});

await worker.schedule();
// Prometheus scrapes the operator port (README, METRICS_PORT): queue depth and age, job runs.
await service.serveMetrics();
const health =
  env.WORKER_HEALTH_PORT === undefined
    ? undefined
    : await startHealthServer({
        port: env.WORKER_HEALTH_PORT,
        host: env.WORKER_HEALTH_HOST,
        db,
        redisUrl: env.REDIS_URL,
        workers: worker.workers,
      });
logger.info(
  {
    worker: worker.name,
    concurrency: env.WORKER_CONCURRENCY,
    indexing: env.INDEXING_ENABLED,
    prefix: env.QUEUE_PREFIX,
    healthPort: env.WORKER_HEALTH_PORT,
    // Which planner runs, never the key.
    planner: env.MODEL_BASE_URL ? (env.AGENT_TOOL_LOOP ? 'model' : 'rules+titles') : 'rules',
  },
  'runtime-worker started',
);

service.onShutdown(async () => {
  await worker.close(env.SHUTDOWN_GRACE_MS);
  await health?.close();
}, env.SHUTDOWN_GRACE_MS + 5_000);
