import { createDb, poolOf } from '@pkgreg/db';
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
import { Redis } from 'ioredis';
import { createEdge } from './app.js';
import { loadEnv } from './env.js';
import { rpcClientErrorBody } from './mcp/transport.js';
import { createEdgeMetrics } from './metrics.js';
import { ensureActiveKey } from './oauth/signing-keys.service.js';

const env = loadEnv();
const logger = createLogger('mcp-edge', env.LOG_LEVEL);
// Traces are off unless an OTLP endpoint is configured (README, Traces); started before the app is
// built, which decides then whether to wrap requests in spans.
const tracing = await startTracing(tracingSettings(env, 'pkgreg-mcp-edge'));
// A PostgreSQL or Redis outage is logged once when it starts and once when it ends (server-kit outage.ts).
const outages = outageMonitorOf(logger);
const db = createDb(env.DATABASE_URL, {
  applicationName: 'pkgreg-mcp-edge',
  onIdleError: (error) => outages.failed(error, 'postgres'),
});
const pool = poolOf(db);
if (pool) outages.watchPostgres(pool);
// Auto-pipelining sends the rate-limit scripts of concurrent requests in one write (one round trip
// each still, far fewer syscalls).
const redis = new Redis(env.REDIS_URL, {
  lazyConnect: false,
  enableAutoPipelining: true,
  ...requestRedisOptions(),
});
outages.watchRedis(redis);

await ensureActiveKey(db);
const metrics = createEdgeMetrics(createMetricsRegistry({ processMetrics: true }));
const edge = createEdge({ db, redis, logger, env, metrics });
const server = await listen(
  edge.handler,
  env.EDGE_PORT,
  env.EDGE_HOST,
  serverTimeouts(env),
  rpcClientErrorBody,
);
server.on('upgrade', edge.upgrade);
logger.info({ url: `http://${env.EDGE_HOST}:${env.EDGE_PORT}` }, 'mcp-edge listening');
metrics.http.observe(server);
// Prometheus scrapes the operator port, never the public one (README, METRICS_PORT).
const metricsServer = await startMetricsServer({
  registry: metrics.registry,
  port: env.METRICS_PORT,
  host: env.METRICS_HOST,
  logger,
});

// The grace outlasts a sync invoke's wait (env.ts), so requests open at SIGTERM are still answered.
onShutdown(
  logger,
  async () => {
    await Promise.all([closeServer(server), edge.closeTunnels(), metricsServer.close()]);
    await edge.shutdown();
    await Promise.allSettled([db.destroy(), redis.quit()]);
    await tracing.shutdown();
  },
  env.SHUTDOWN_GRACE_MS,
);
