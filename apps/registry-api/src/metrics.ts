import { type Db, poolOf } from '@pkgreg/db';
import {
  createHttpMetrics,
  createMetricsRegistry,
  createPoolMetrics,
  createRedisMetrics,
  Gauge,
  type HttpMetrics,
  type Logger,
  type PoolMetrics,
  type RedisMetrics,
  type Registry,
} from '@pkgreg/server-kit';
import type { Redis } from 'ioredis';
import type { DownloadRecorder } from './downloads/download-recorder.js';
import { oldestUnfoldedBatchAgeSeconds } from './downloads/downloads.repository.js';

// The registry's Prometheus metrics (server-kit metrics.ts; served on METRICS_PORT by index.ts): requests
// per route template, rejects by error code, pools, Redis, the track backlog and the fold lag.

export interface RegistryMetrics {
  readonly registry: Registry;
  readonly http: HttpMetrics;
  readonly pools: PoolMetrics;
  readonly redis: RedisMetrics;
  /** Reports the recorder's backlog and the age of the oldest unfolded track batch on every scrape. */
  watchDownloads(recorder: DownloadRecorder, db: Db, logger: Logger): void;
  /** Watches the pool under `db` (as `main`) and `redis`. */
  watchConnections(db: Db, redis: Redis): void;
}

export function createRegistryMetrics(registry: Registry = createMetricsRegistry()): RegistryMetrics {
  const http = createHttpMetrics(registry);
  const pools = createPoolMetrics(registry);
  const redisMetrics = createRedisMetrics(registry);
  let recorder: DownloadRecorder | undefined;
  let downloadsDb: { db: Db; logger: Logger } | undefined;

  new Gauge({
    name: 'pkgreg_track_waiting_calls',
    help: 'Track calls waiting for the next group-commit batch',
    registers: [registry],
    collect() {
      const backlog = recorder?.backlog?.();
      if (backlog) this.set(backlog.waiting);
    },
  });
  new Gauge({
    name: 'pkgreg_track_inflight_batches',
    help: 'Track batches being committed',
    registers: [registry],
    collect() {
      const backlog = recorder?.backlog?.();
      if (backlog) this.set(backlog.inFlight);
    },
  });
  new Gauge({
    name: 'pkgreg_download_fold_lag_seconds',
    help: 'Age of the oldest committed track batch not yet folded into download counts (0 when none)',
    registers: [registry],
    async collect() {
      if (!downloadsDb) return;
      try {
        this.set(await oldestUnfoldedBatchAgeSeconds(downloadsDb.db));
      } catch (error) {
        // A scrape during a database outage still answers with everything else.
        downloadsDb.logger.debug({ err: error }, 'fold lag unavailable');
      }
    },
  });

  return {
    registry,
    http,
    pools,
    redis: redisMetrics,
    watchDownloads(r, db, logger) {
      recorder = r;
      downloadsDb = { db, logger };
    },
    watchConnections(db, redis) {
      const pool = poolOf(db);
      if (pool) pools.watch('main', pool);
      redisMetrics.watch(redis);
    },
  };
}
