import { poolOf } from '@pkgreg/db';
import { logOrigin } from '@pkgreg/registry';
import {
  closeServer,
  listen,
  redisKeyOptions,
  serverTimeouts,
  startService,
  traceRequests,
} from '@pkgreg/server-kit';
import { createRuntimeQueue } from '@pkgreg/tasks';
import { createRegistry } from './app.js';
import { startDownloadFlusher } from './downloads/download-flusher.js';
import { createDownloadRecorder } from './downloads/download-recorder.js';
import { loadEnv, publishingSettings, registrySigner } from './env.js';
import { createRegistryMetrics } from './metrics.js';
import {
  startDerivedTablesRefresher,
  startPopularityRefresher,
} from './packages/derived-tables-refresher.js';
import { startVersionSigner } from './provenance/version-signer.js';
import { openReadDb } from './read-db.js';

const env = loadEnv();
// A configured signing key that is not one fails the start, before anything listens.
const signer = registrySigner(env);
// Logger, traces, outage watch, metrics registry; pools and Redis opened through it close on shutdown.
const service = await startService('registry-api', env);
const { logger } = service;
// JIT off: a search whose row estimate runs high (a long OR of a rare word's lexemes) passes
// jit_above_cost and spends longer compiling the query than running it. No request here runs long
// enough to earn compilation back.
const db = service.openDb(env.DATABASE_URL, {
  max: env.REGISTRY_DB_POOL_SIZE,
  applicationName: 'pkgreg-registry-api',
  settings: { jit: 'off' },
});
const redis = service.openRedis(env.REDIS_URL, redisKeyOptions(env));

// Track batches get connections of their own: a batch never waits behind a slow list or search query.
// The batch statement is prepared once per connection; a generic plan skips re-planning its join on
// every batch, and its cost does not depend on the values.
const trackPool = service.openPool(env.DATABASE_URL, {
  max: env.TRACK_MAX_IN_FLIGHT,
  applicationName: 'pkgreg-registry-api-track',
  settings: { plan_cache_mode: 'force_generic_plan' },
});
const recorder = createDownloadRecorder(db, {
  maxInFlight: env.TRACK_MAX_IN_FLIGHT,
  pool: trackPool,
  holdMs: env.TRACK_HOLD_MS,
});
// List, search, detail and versions read from a replica when DATABASE_READ_URL is set (read-db.ts).
const readDb = openReadDb(env, service.openDb);
const readPool = readDb && poolOf(readDb);
// Publishes enqueue indexing jobs for the runtime workers (same Redis, same QUEUE_PREFIX).
const queue = createRuntimeQueue({ connection: env.REDIS_URL, prefix: env.QUEUE_PREFIX });
const metrics = createRegistryMetrics(service.metrics);
metrics.pools.watch('track', trackPool);
if (readPool) metrics.pools.watch('read', readPool);
const registry = createRegistry({ db, readDb, redis, logger, env, recorder, queue, metrics });
const server = await listen(
  traceRequests(registry.handler),
  env.REGISTRY_PORT,
  env.REGISTRY_HOST,
  serverTimeouts(env),
);
const flusher = startDownloadFlusher(db, logger, env.DOWNLOAD_FLUSH_INTERVAL_MS);
const refresher = startDerivedTablesRefresher(db, logger, env.DERIVED_REFRESH_INTERVAL_MS);
const popularity = startPopularityRefresher(db, logger, env.POPULARITY_REFRESH_INTERVAL_MS);
const signing = signer
  ? await startVersionSigner(db, signer, {
      logger,
      intervalMs: env.SIGNING_INTERVAL_MS,
      logOrigin: logOrigin(publishingSettings(env).publicUrl),
      builderId: publishingSettings(env).publicUrl,
    })
  : undefined;
logger.info({ url: `http://${env.REGISTRY_HOST}:${env.REGISTRY_PORT}` }, 'registry-api listening');
// A parent that started this process with an IPC channel (a process manager's wait_ready, the tests'
// harness) learns that this process, not another one, holds the port.
process.send?.('ready');
await service.serveMetrics();

service.onShutdown(async () => {
  await closeServer(server);
  // Answered tracks are already committed; drain only the ones still waiting, then fold what is left.
  await recorder.drain();
  await Promise.allSettled([
    flusher.stop(),
    refresher.stop(),
    popularity.stop(),
    signing?.stop(),
    queue.close(),
    registry.close(),
  ]);
});
