import { createDb, createPool, poolOf } from '@pkgreg/db';
import {
  closeServer,
  createLogger,
  createMetricsRegistry,
  listen,
  onShutdown,
  outageMonitorOf,
  requestRedisOptions,
  serverTimeouts,
  startMetricsServer,
  startTracing,
  tracingSettings,
} from '@pkgreg/server-kit';
import { createRuntimeQueue } from '@pkgreg/tasks';
import { Redis } from 'ioredis';
import { createApp } from './app.js';
import { startDownloadFlusher } from './downloads/download-flusher.js';
import { createDownloadRecorder } from './downloads/download-recorder.js';
import { loadEnv } from './env.js';
import { createRegistryMetrics } from './metrics.js';
import {
  startDerivedTablesRefresher,
  startPopularityRefresher,
} from './packages/derived-tables-refresher.js';
import { openReadDb } from './read-db.js';

const env = loadEnv();
const logger = createLogger('registry-api', env.LOG_LEVEL);
// Traces are off unless an OTLP endpoint is configured (README, Traces); started before the app is
// built, which decides then whether to wrap requests in spans.
const tracing = await startTracing(tracingSettings(env, 'pkgreg-registry-api'));
// A PostgreSQL or Redis outage is logged once when it starts and once when it ends (server-kit outage.ts).
const outages = outageMonitorOf(logger);
const onIdleError = (error: Error) => outages.failed(error, 'postgres');
// JIT off: a search whose row estimate runs high (a long OR of a rare word's lexemes) passes
// jit_above_cost and spends longer compiling the query than running it. No request here runs long
// enough to earn compilation back.
const db = createDb(env.DATABASE_URL, {
  max: env.REGISTRY_DB_POOL_SIZE,
  applicationName: 'pkgreg-registry-api',
  settings: { jit: 'off' },
  onIdleError,
});
const redis = new Redis(env.REDIS_URL, { lazyConnect: false, ...requestRedisOptions() });
outages.watchRedis(redis);

// Track batches get connections of their own: a batch never waits behind a slow list or search query.
// The batch statement is prepared once per connection; a generic plan skips re-planning its join on
// every batch, and its cost does not depend on the values.
const trackPool = createPool(env.DATABASE_URL, {
  max: env.TRACK_MAX_IN_FLIGHT,
  applicationName: 'pkgreg-registry-api-track',
  settings: { plan_cache_mode: 'force_generic_plan' },
  onIdleError,
});
for (const pool of [poolOf(db), trackPool]) if (pool) outages.watchPostgres(pool);
const recorder = createDownloadRecorder(db, {
  maxInFlight: env.TRACK_MAX_IN_FLIGHT,
  pool: trackPool,
  holdMs: env.TRACK_HOLD_MS,
});
// List, search, detail and versions read from a replica when DATABASE_READ_URL is set (read-db.ts).
const readDb = openReadDb(env, { onIdleError });
const readPool = readDb && poolOf(readDb);
if (readPool) outages.watchPostgres(readPool);
// Publishes enqueue indexing jobs for the runtime workers (same Redis, same QUEUE_PREFIX).
const queue = createRuntimeQueue({ connection: env.REDIS_URL, prefix: env.QUEUE_PREFIX });
const metrics = createRegistryMetrics(createMetricsRegistry({ processMetrics: true }));
metrics.pools.watch('track', trackPool);
if (readPool) metrics.pools.watch('read', readPool);
const server = await listen(
  createApp({ db, readDb, redis, logger, env, recorder, queue, metrics }),
  env.REGISTRY_PORT,
  env.REGISTRY_HOST,
  serverTimeouts(env),
);
const flusher = startDownloadFlusher(db, logger, env.DOWNLOAD_FLUSH_INTERVAL_MS);
const refresher = startDerivedTablesRefresher(db, logger, env.DERIVED_REFRESH_INTERVAL_MS);
const popularity = startPopularityRefresher(db, logger, env.POPULARITY_REFRESH_INTERVAL_MS);
logger.info({ url: `http://${env.REGISTRY_HOST}:${env.REGISTRY_PORT}` }, 'registry-api listening');
// Prometheus scrapes the operator port, never the public one (README, METRICS_PORT).
const metricsServer = await startMetricsServer({
  registry: metrics.registry,
  port: env.METRICS_PORT,
  host: env.METRICS_HOST,
  logger,
});

onShutdown(logger, async () => {
  await Promise.all([closeServer(server), metricsServer.close()]);
  // Answered tracks are already committed; drain only the ones still waiting, then fold what is left.
  await recorder.drain();
  await Promise.allSettled([flusher.stop(), refresher.stop(), popularity.stop()]);
  await Promise.allSettled([db.destroy(), readDb?.destroy(), trackPool.end(), redis.quit(), queue.close()]);
  await tracing.shutdown();
});
