import { type CreateDbOptions, createDb, createPool, type Db, type PgPool, poolOf } from '@pkgreg/db';
import { Redis, type RedisOptions } from 'ioredis';
import { createLogger, type Logger } from './logger.js';
import { createMetricsRegistry, type MetricsServer, type Registry, startMetricsServer } from './metrics.js';
import { type OutageMonitor, outageMonitorOf, requestRedisOptions } from './outage.js';
import { onShutdown } from './shutdown.js';
import { startTracing, type Tracing, tracingSettings } from './tracing.js';

/** What every app's env.ts holds for the start-up (commonEnvShape, metricsEnvShape). */
export type ServiceEnv = Parameters<typeof tracingSettings>[0] & {
  LOG_LEVEL: string;
  METRICS_HOST: string;
  METRICS_PORT: number | 'off';
};

/**
 * One app process as its index.ts starts it: the logger, traces, the outage monitor, and the pools,
 * Redis clients and metrics listener it opened, each watched for outages and closed on shutdown.
 */
export interface Service {
  readonly logger: Logger;
  readonly tracing: Tracing;
  readonly outages: OutageMonitor;
  /** The app's metrics registry, with prom-client's process and Node.js metrics. */
  readonly metrics: Registry;
  /** A Kysely Db whose pool reports outages (an idle connection's failure, a new connection). */
  openDb(url: string, options?: CreateDbOptions): Db;
  /** A pg pool of its own (statements run on pg directly), watched likewise. */
  openPool(url: string, options?: CreateDbOptions): PgPool;
  /**
   * An ioredis client for the request path (requestRedisOptions: fails fast while Redis is away),
   * connecting at once; its errors mark Redis down once, `ready` marks it back.
   */
  openRedis(url: string, options?: RedisOptions): Redis;
  /** Serves `metrics` on the operator listener (METRICS_HOST, METRICS_PORT), never the public port. */
  serveMetrics(): Promise<MetricsServer>;
  /**
   * On SIGTERM or SIGINT (once; a second signal or a close past `graceMs` exits 1): runs `close` (the
   * app's servers and work in flight), then closes the metrics listener, the pools and Redis clients
   * opened here, and ends tracing last, so the shutdown's own spans are exported; then exits 0.
   */
  onShutdown(close: () => Promise<void>, graceMs?: number): void;
}

/**
 * Starts what the three apps' index.ts each started the same way. Tracing starts here, before the app
 * is built: the app decides then whether to wrap requests in spans. Traces are off unless an OTLP
 * endpoint is configured (README, Traces); the service name is `pkgreg-<name>` unless OTEL_SERVICE_NAME.
 */
export async function startService(name: string, env: ServiceEnv): Promise<Service> {
  const logger = createLogger(name, env.LOG_LEVEL);
  const tracing = await startTracing(tracingSettings(env, `pkgreg-${name}`));
  // A PostgreSQL or Redis outage is logged once when it starts and once when it ends (outage.ts).
  const outages = outageMonitorOf(logger);
  const onIdleError = (error: Error) => outages.failed(error, 'postgres');
  const metrics = createMetricsRegistry({ processMetrics: true });
  const closers: Array<() => Promise<unknown>> = [];
  let metricsServer: MetricsServer | undefined;

  const watched = (options: CreateDbOptions): CreateDbOptions => ({ onIdleError, ...options });

  return {
    logger,
    tracing,
    outages,
    metrics,
    openDb(url, options = {}) {
      const db = createDb(url, watched(options));
      const pool = poolOf(db);
      if (pool) outages.watchPostgres(pool);
      closers.push(() => db.destroy());
      return db;
    },
    openPool(url, options = {}) {
      const pool = createPool(url, watched(options));
      outages.watchPostgres(pool);
      closers.push(() => pool.end());
      return pool;
    },
    openRedis(url, options = {}) {
      const redis = new Redis(url, { lazyConnect: false, ...options, ...requestRedisOptions() });
      outages.watchRedis(redis);
      closers.push(() => redis.quit());
      return redis;
    },
    async serveMetrics() {
      metricsServer = await startMetricsServer({
        registry: metrics,
        port: env.METRICS_PORT,
        host: env.METRICS_HOST,
        logger,
      });
      return metricsServer;
    },
    onShutdown(close, graceMs) {
      onShutdown(
        logger,
        async () => {
          await close();
          await metricsServer?.close();
          await Promise.allSettled(closers.map((end) => end()));
          await tracing.shutdown();
        },
        graceMs,
      );
    },
  };
}
