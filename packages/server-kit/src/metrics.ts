import {
  createServer,
  type IncomingMessage,
  type RequestListener,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import type { PgPool } from '@pkgreg/db';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import { z } from 'zod';

// Prometheus metrics (prom-client) shared by every app: one Registry per app, served on an operator
// listener of its own (METRICS_HOST/METRICS_PORT), never on the public port. Label values come only from
// closed sets (route templates, methods, status classes, error codes, command and queue names), never
// from a path, a token, a namespace or anything else a caller chooses (docs/decisions.md, "Metrics").

export { Counter, Gauge, Histogram, Registry };

/** Latency buckets in seconds: fine below a millisecond, where the hot endpoints answer, up to 10 s. */
export const LATENCY_BUCKETS = [
  0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10,
];
/** Job and indexing durations: from a few milliseconds to minutes. */
export const JOB_BUCKETS = [0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300, 900];

/** One label set of a FastHistogram: `observe` only adds to numbers it owns. */
export interface HistogramSeries {
  observe(value: number): void;
}

/**
 * A Prometheus histogram for the hot paths. prom-client's own observe builds a key string and an
 * object per call, which cost more than a cached detail request's own work; here each label set is made
 * once (`labels`), an observation adds to a typed array, and the registry reads it on scrape through the
 * same get() its own metrics offer.
 */
export class FastHistogram<L extends string> {
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  readonly #bounds: Float64Array;
  readonly #series = new Map<
    string,
    { labels: Record<L, string>; counts: Float64Array; sum: number; count: number; seen: boolean }
  >();

  constructor(
    readonly name: string,
    readonly help: string,
    readonly labelNames: readonly L[],
    buckets: readonly number[],
    registry: Registry,
  ) {
    this.#bounds = Float64Array.from(buckets);
    registry.registerMetric(this as unknown as Histogram<L>);
  }

  /** The series of `labels`, made on first use: keep it, and observe through it. */
  labels(labels: Record<L, string>): HistogramSeries {
    const key = this.labelNames.map((n) => labels[n]).join('\u0000');
    let series = this.#series.get(key);
    if (!series) {
      series = {
        labels: { ...labels },
        counts: new Float64Array(this.#bounds.length),
        sum: 0,
        count: 0,
        seen: false,
      };
      this.#series.set(key, series);
    }
    const s = series;
    const bounds = this.#bounds;
    return {
      observe(value: number) {
        let i = 0;
        while (i < bounds.length && value > (bounds[i] as number)) i += 1;
        if (i < bounds.length) s.counts[i] = (s.counts[i] as number) + 1;
        s.sum += value;
        s.count += 1;
        s.seen = true;
      },
    };
  }

  /** What prom-client's registry reads: cumulative buckets, +Inf, sum and count per series. */
  async get() {
    const values: Array<{ labels: Record<string, string | number>; value: number; metricName: string }> = [];
    // A label set made ahead of use (every status class of a route, say) is shown once observed.
    for (const { labels, counts, sum, count, seen } of this.#series.values()) {
      if (!seen) continue;
      let cumulative = 0;
      this.#bounds.forEach((le, i) => {
        cumulative += counts[i] as number;
        values.push({ labels: { ...labels, le }, value: cumulative, metricName: `${this.name}_bucket` });
      });
      values.push({ labels: { ...labels, le: '+Inf' }, value: count, metricName: `${this.name}_bucket` });
      values.push({ labels, value: sum, metricName: `${this.name}_sum` });
      values.push({ labels, value: count, metricName: `${this.name}_count` });
    }
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }

  reset(): void {
    for (const s of this.#series.values()) {
      s.counts.fill(0);
      s.sum = 0;
      s.count = 0;
    }
  }
}

/** A counter for the hot paths, made like FastHistogram: `labels` once, then `inc` adds to a number. */
export class FastCounter<L extends string> {
  readonly type = 'counter';
  readonly aggregator = 'sum';
  readonly #series = new Map<string, { labels: Record<L, string>; value: number }>();

  constructor(
    readonly name: string,
    readonly help: string,
    readonly labelNames: readonly L[],
    registry: Registry,
  ) {
    registry.registerMetric(this as unknown as Counter<L>);
  }

  labels(labels: Record<L, string>): { inc(by?: number): void } {
    const key = this.labelNames.map((n) => labels[n]).join('\u0000');
    let series = this.#series.get(key);
    if (!series) {
      series = { labels: { ...labels }, value: 0 };
      this.#series.set(key, series);
    }
    const s = series;
    return {
      inc(by = 1) {
        s.value += by;
      },
    };
  }

  async get() {
    const values = [...this.#series.values()].map(({ labels, value }) => ({ labels, value }));
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }

  reset(): void {
    for (const s of this.#series.values()) s.value = 0;
  }
}

/** METRICS_HOST / METRICS_PORT of an app's env.ts: a port, `0` for any free one, or `off`. */
export function metricsEnvShape(defaultPort: number) {
  return {
    METRICS_HOST: z.string().min(1).default('127.0.0.1'),
    METRICS_PORT: z.preprocess(
      (v) => (v === '' ? undefined : v),
      z.union([z.literal('off'), z.coerce.number().int().min(0).max(65535)]).default(defaultPort),
    ),
  };
}

/** An app's registry; `processMetrics` adds prom-client's default process and Node.js metrics. */
export function createMetricsRegistry(options: { processMetrics?: boolean } = {}): Registry {
  const registry = new Registry();
  if (options.processMetrics) collectDefaultMetrics({ register: registry });
  return registry;
}

export interface MetricsServer {
  /** The bound port; undefined when metrics are off or the port could not be bound. */
  readonly port: number | undefined;
  close(): Promise<void>;
}

/**
 * Serves `GET /metrics` from `registry` on its own listener. `off` serves nothing; a port already in use
 * is logged and the app runs on without metrics, so a second process on one machine still starts.
 */
export async function startMetricsServer(options: {
  registry: Registry;
  port: number | 'off';
  host: string;
  logger: Logger;
}): Promise<MetricsServer> {
  const { registry, logger } = options;
  const wanted = options.port;
  if (wanted === 'off') return { port: undefined, close: async () => {} };
  const server = createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0];
    if (path !== '/metrics' || (req.method !== 'GET' && req.method !== 'HEAD')) {
      res.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8' }).end('Not found\n');
      return;
    }
    registry.metrics().then(
      (text) => {
        res.writeHead(200, { 'Content-Type': registry.contentType });
        res.end(req.method === 'HEAD' ? undefined : text);
      },
      (error: unknown) => {
        logger.error({ err: error }, 'metrics collection failed');
        res
          .writeHead(500, { 'Content-Type': 'text/plain; charset=utf-8' })
          .end('metrics collection failed\n');
      },
    );
  });
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(wanted, options.host, () => {
        server.off('error', reject);
        resolve();
      });
    });
  } catch (error) {
    logger.warn(
      { err: error, host: options.host, port: wanted },
      'metrics listener could not bind; serving no metrics (set METRICS_PORT)',
    );
    return { port: undefined, close: async () => {} };
  }
  const port = (server.address() as AddressInfo).port;
  logger.info({ url: `http://${options.host}:${port}/metrics` }, 'metrics listening');
  return {
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

// ---- HTTP requests ----

const kStart = Symbol('pkgreg.metrics.start');
const kRoute = Symbol('pkgreg.metrics.route');
const kReason = Symbol('pkgreg.metrics.reason');

interface Marked {
  [kStart]?: number;
  [kRoute]?: string;
  [kReason]?: string;
}

/** Names the route template of a request answered outside Express (Express's own routes name themselves). */
export function setRouteTemplate(req: IncomingMessage, route: string): void {
  (req as Marked)[kRoute] = route;
}

/** Records why a request was refused (the error code of the documented error body). */
export function setRejectReason(res: ServerResponse, reason: string): void {
  (res as Marked)[kReason] = reason;
}

const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);
const STATUS_CLASSES = ['other', '1xx', '2xx', '3xx', '4xx', '5xx', 'aborted'] as const;

type Child = HistogramSeries;

export interface HttpMetrics {
  readonly duration: FastHistogram<'method' | 'route' | 'status_class'>;
  readonly rejects: Counter<'route' | 'reason'>;
  /** Wraps a request listener: each response is observed when it closes, under its route template. */
  instrument(handler: RequestListener): RequestListener;
  /** The same for every request `server` receives (its listener left as it is). */
  observe(server: Server): void;
}

/** The route a request matched: set by setRouteTemplate, else Express's matched route, else `unmatched`. */
function routeOf(req: IncomingMessage): string {
  return routeTemplateOf(req) ?? 'unmatched';
}

/** The route template set by setRouteTemplate, else Express's matched route (tracing names spans by it). */
export function routeTemplateOf(req: IncomingMessage): string | undefined {
  const marked = (req as Marked)[kRoute];
  if (marked !== undefined) return marked;
  const route = (req as { route?: { path?: unknown } }).route;
  return typeof route?.path === 'string' ? route.path : undefined;
}

export function createHttpMetrics(registry: Registry): HttpMetrics {
  const duration = new FastHistogram(
    'pkgreg_http_request_duration_seconds',
    'HTTP requests on the public port by method, route template and status class',
    ['method', 'route', 'status_class'] as const,
    LATENCY_BUCKETS,
    registry,
  );
  const rejects = new Counter({
    name: 'pkgreg_http_rejects_total',
    help: 'HTTP requests refused, by route template and error code of the error body',
    labelNames: ['route', 'reason'] as const,
    registers: [registry],
  });
  // Children are looked up without building a key string: a hot request allocates nothing here.
  const children = new Map<string, Map<string, Child[]>>();
  const childOf = (route: string, method: string, statusClass: number): Child => {
    let byMethod = children.get(route);
    if (!byMethod) {
      byMethod = new Map();
      children.set(route, byMethod);
    }
    let byClass = byMethod.get(method);
    if (!byClass) {
      byClass = STATUS_CLASSES.map((c) => duration.labels({ method, route, status_class: c }));
      byMethod.set(method, byClass);
    }
    return byClass[statusClass] as Child;
  };

  function onClose(this: ServerResponse): void {
    const marked = this as Marked;
    const started = marked[kStart];
    if (started === undefined) return;
    const req = this.req;
    const route = routeOf(req);
    const method = req.method !== undefined && METHODS.has(req.method) ? req.method : 'other';
    const hundreds = Math.floor(this.statusCode / 100);
    const statusClass = !this.writableFinished ? 6 : hundreds >= 1 && hundreds <= 5 ? hundreds : 0;
    childOf(route, method, statusClass).observe((performance.now() - started) / 1000);
    const reason = marked[kReason];
    if (reason !== undefined) rejects.inc({ route, reason });
  }

  const start = (_req: IncomingMessage, res: ServerResponse) => {
    (res as Marked)[kStart] = performance.now();
    res.on('close', onClose);
  };
  return {
    duration,
    rejects,
    instrument(handler) {
      return (req, res) => {
        start(req, res);
        handler(req, res);
      };
    },
    observe(server) {
      server.prependListener('request', start);
    },
  };
}

// ---- PostgreSQL pools ----

export interface PoolMetrics {
  /** Reports `pool` under `name` on every scrape, and times its connection acquisitions. */
  watch(name: string, pool: PgPool): void;
}

const kPoolTimed = Symbol('pkgreg.metrics.poolTimed');

export function createPoolMetrics(registry: Registry): PoolMetrics {
  const pools = new Map<string, PgPool>();
  new Gauge({
    name: 'pkgreg_db_pool_connections',
    help: 'PostgreSQL pool connections by state (idle, active)',
    labelNames: ['pool', 'state'] as const,
    registers: [registry],
    collect() {
      for (const [name, pool] of pools) {
        this.set({ pool: name, state: 'idle' }, pool.idleCount);
        this.set({ pool: name, state: 'active' }, pool.totalCount - pool.idleCount);
      }
    },
  });
  new Gauge({
    name: 'pkgreg_db_pool_max_connections',
    help: 'PostgreSQL pool size limit',
    labelNames: ['pool'] as const,
    registers: [registry],
    collect() {
      for (const [name, pool] of pools) this.set({ pool: name }, pool.options.max ?? 10);
    },
  });
  new Gauge({
    name: 'pkgreg_db_pool_waiting_clients',
    help: 'Queries waiting for a PostgreSQL pool connection',
    labelNames: ['pool'] as const,
    registers: [registry],
    collect() {
      for (const [name, pool] of pools) this.set({ pool: name }, pool.waitingCount);
    },
  });
  const acquire = new FastHistogram(
    'pkgreg_db_pool_acquire_seconds',
    'Time to get a connection from the PostgreSQL pool (waiting, or opening one)',
    ['pool'] as const,
    LATENCY_BUCKETS,
    registry,
  );

  return {
    watch(name, pool) {
      pools.set(name, pool);
      const timed = pool as PgPool & { [kPoolTimed]?: boolean };
      // One wrapper per pool, whichever registry asked first (tests build several apps on one pool).
      if (timed[kPoolTimed]) return;
      timed[kPoolTimed] = true;
      const child = acquire.labels({ pool: name });
      const connect = pool.connect.bind(pool) as (cb?: (...args: unknown[]) => void) => unknown;
      // pg calls connect(callback) from pool.query and Kysely calls connect(): both are timed.
      (pool as { connect: unknown }).connect = (callback?: (...args: unknown[]) => void) => {
        const started = performance.now();
        if (typeof callback === 'function') {
          return connect((...args: unknown[]) => {
            if (!args[0]) child.observe((performance.now() - started) / 1000);
            callback(...args);
          });
        }
        return (connect() as Promise<unknown>).then((client) => {
          child.observe((performance.now() - started) / 1000);
          return client;
        });
      };
    },
  };
}

// ---- Redis ----

export interface RedisMetrics {
  /** Times every command `redis` sends (auto-pipelined ones too), labelled by command name. */
  watch(redis: Redis): void;
}

const kRedisTimed = Symbol('pkgreg.metrics.redisTimed');

interface SentCommand {
  name: string;
  promise: Promise<unknown>;
}

export function createRedisMetrics(registry: Registry): RedisMetrics {
  const duration = new FastHistogram(
    'pkgreg_redis_command_duration_seconds',
    'Redis round trips by command, from sending to the reply',
    ['command'] as const,
    LATENCY_BUCKETS,
    registry,
  );
  const errors = new Counter({
    name: 'pkgreg_redis_command_errors_total',
    help: 'Redis commands answered with an error or never answered (connection lost)',
    labelNames: ['command'] as const,
    registers: [registry],
  });
  return {
    watch(redis) {
      const target = redis as Redis & { [kRedisTimed]?: boolean };
      if (target[kRedisTimed]) return;
      target[kRedisTimed] = true;
      // Redis' own command names only (a closed set); anything else is `other`.
      const known = new Set(redis.getBuiltinCommands().map((c) => c.toLowerCase()));
      const children = new Map<string, { ok: Child; failed: { inc(): void } }>();
      const childrenOf = (name: string) => {
        const command = known.has(name) ? name : 'other';
        let entry = children.get(command);
        if (!entry) {
          entry = { ok: duration.labels({ command }), failed: errors.labels({ command }) };
          children.set(command, entry);
        }
        return entry;
      };
      const send = redis.sendCommand.bind(redis) as (...args: unknown[]) => unknown;
      (redis as { sendCommand: unknown }).sendCommand = (command: SentCommand, ...rest: unknown[]) => {
        const started = performance.now();
        const entry = childrenOf(command.name);
        command.promise.then(
          () => entry.ok.observe((performance.now() - started) / 1000),
          () => entry.failed.inc(),
        );
        return send(command, ...rest);
      };
    },
  };
}

// ---- BullMQ queues ----

/** What a BullMQ Queue offers that the collector reads (bullmq's Queue satisfies it). */
export interface QueueLike {
  readonly name: string;
  getJobCounts(...types: string[]): Promise<Record<string, number>>;
  getWaiting(start?: number, end?: number): Promise<Array<{ timestamp: number } | undefined>>;
}

const QUEUE_STATES = ['waiting', 'prioritized', 'active', 'delayed', 'failed', 'waiting-children'] as const;

/**
 * Reports each queue's jobs by state and the age of its oldest waiting job, read from Redis on every
 * scrape (several workers report the same queues: aggregate with max, not sum).
 */
export function createQueueMetrics(
  registry: Registry,
  queues: () => QueueLike[],
  onError?: (error: unknown) => void,
): void {
  // Both gauges are filled by one read per queue per scrape: the first collect reads, the second reuses it.
  let reading: Promise<Array<{ name: string; counts: Record<string, number>; oldest?: number }>> | undefined;
  const read = () => {
    reading ??= Promise.all(
      queues().map(async (queue) => {
        const [counts, oldest] = await Promise.all([
          queue.getJobCounts(...QUEUE_STATES),
          queue.getWaiting(0, 0),
        ]);
        return { name: queue.name, counts, oldest: oldest[0]?.timestamp };
      }),
    ).finally(() => {
      setImmediate(() => {
        reading = undefined;
      });
    });
    return reading;
  };
  new Gauge({
    name: 'pkgreg_queue_jobs',
    help: 'BullMQ jobs by queue and state',
    labelNames: ['queue', 'state'] as const,
    registers: [registry],
    async collect() {
      try {
        for (const { name, counts } of await read()) {
          for (const state of QUEUE_STATES) this.set({ queue: name, state }, counts[state] ?? 0);
        }
      } catch (error) {
        onError?.(error);
      }
    },
  });
  new Gauge({
    name: 'pkgreg_queue_oldest_waiting_job_age_seconds',
    help: 'Age of the oldest job waiting in each BullMQ queue (0 when none waits)',
    labelNames: ['queue'] as const,
    registers: [registry],
    async collect() {
      try {
        const now = Date.now();
        for (const { name, oldest } of await read()) {
          this.set({ queue: name }, oldest === undefined ? 0 : Math.max(0, (now - oldest) / 1000));
        }
      } catch {
        // Logged once by pkgreg_queue_jobs' collect.
      }
    },
  });
}
