import type { Logger } from './logger.js';

// A dependency outage (PostgreSQL or Redis stopped, restarting, unreachable) is expected and retryable:
// requests it fails are answered 503 with Retry-After, and the process logs the outage once when it
// starts and once when the dependency answers again, never a stack per request. Apps recover by
// themselves: pg opens new connections and ioredis reconnects; this only decides and reports.

export type Dependency = 'postgres' | 'redis';

/** Seconds a client is told to wait (Retry-After) when a dependency is down. */
export const OUTAGE_RETRY_AFTER_SECONDS = 1;

/** Socket-level failures: the peer is gone, refuses, or cannot be reached. */
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EHOSTDOWN',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

// SQLSTATEs of a server that is shutting down, crashed, starting up, or a broken connection (class 08).
const PG_OUTAGE_STATES = new Set(['57P01', '57P02', '57P03']);

// What pg and pg-pool raise when a connection dies or cannot be had in time.
const PG_MESSAGES = [
  'Connection terminated',
  'timeout exceeded when trying to connect',
  'Client has encountered a connection error',
  'Query read timeout',
];

// What ioredis (and BullMQ through it) raises instead of waiting on a Redis that is not there.
const REDIS_MESSAGES = [
  'Connection is closed',
  "Stream isn't writeable",
  'Command timed out',
  'Reached the max retries per request limit',
];

interface ErrorLike {
  name?: unknown;
  code?: unknown;
  message?: unknown;
  cause?: unknown;
  errors?: unknown;
}

/** The error, the errors of an AggregateError and the causes, each with whether it was reached by a cause. */
function* causes(error: unknown, depth = 0, viaCause = false): Generator<[ErrorLike, boolean]> {
  if (!error || typeof error !== 'object' || depth > 5) return;
  const e = error as ErrorLike;
  yield [e, viaCause];
  if (Array.isArray(e.errors)) for (const inner of e.errors) yield* causes(inner, depth + 1, viaCause);
  if (e.cause !== undefined) yield* causes(e.cause, depth + 1, true);
}

const startsWithAny = (message: string, prefixes: string[]) => prefixes.some((p) => message.startsWith(p));

function classifyOne(e: ErrorLike): Dependency | 'network' | undefined {
  const code = typeof e.code === 'string' ? e.code : '';
  const message = typeof e.message === 'string' ? e.message : '';
  if (e.name === 'MaxRetriesPerRequestError' || startsWithAny(message, REDIS_MESSAGES)) return 'redis';
  // A Redis that restarted from disk answers LOADING until its data set is read.
  if (message.startsWith('LOADING ')) return 'redis';
  if (PG_OUTAGE_STATES.has(code) || /^08[0-9A-Z]{3}$/.test(code)) return 'postgres';
  if (startsWithAny(message, PG_MESSAGES)) return 'postgres';
  if (NETWORK_CODES.has(code)) return 'network';
  return undefined;
}

/**
 * Whether `error` (or its cause) says a dependency is unreachable, and which one. A bare socket error
 * is PostgreSQL's: pg hands a refused or reset connection to the query's caller as it is, while
 * ioredis retries and then raises its own errors (matched above). One found only as the cause of
 * another error is not (fetch's "fetch failed" of an HTTP service carries it so). `undefined` for
 * every other error.
 */
export function dependencyOutageOf(error: unknown): Dependency | undefined {
  let network = false;
  for (const [e, viaCause] of causes(error)) {
    const found = classifyOne(e);
    if (found === 'network') network ||= !viaCause;
    else if (found) return found;
  }
  return network ? 'postgres' : undefined;
}

/** A short, secret-free description of an outage error for the one log line (a code or pg's message). */
function outageReason(error: unknown): string {
  for (const [e] of causes(error)) {
    if (typeof e.code === 'string' && e.code) return e.code;
  }
  const message = (error as ErrorLike | undefined)?.message;
  return typeof message === 'string' ? message.slice(0, 120) : 'unreachable';
}

interface PoolLike {
  on(event: 'connect', listener: () => void): unknown;
  query(text: string): Promise<unknown>;
}

interface RedisLike {
  on(event: 'ready', listener: () => void): unknown;
  on(event: 'error', listener: (error: Error) => void): unknown;
}

export interface OutageMonitor {
  /**
   * Notes a failed call. Returns the dependency when the error is an outage (the caller answers 503 and
   * logs nothing more), otherwise undefined (an ordinary error, logged by the caller).
   */
  failed(error: unknown, dependency?: Dependency): Dependency | undefined;
  /** Notes that `dependency` answered; logs the recovery when it was down. */
  answered(dependency: Dependency): void;
  isDown(dependency: Dependency): boolean;
  /**
   * Watches a pg pool: a new connection means PostgreSQL answers again, and while it is down `select 1`
   * is tried every probe interval, so the recovery is seen without waiting for a request.
   */
  watchPostgres(pool: PoolLike): void;
  /** Watches an ioredis client: its connection errors mark Redis down (once), `ready` marks it back. */
  watchRedis(redis: RedisLike): void;
}

export interface OutageMonitorOptions {
  /** How often a watched pool is probed while PostgreSQL is down (ms). */
  probeIntervalMs?: number;
  /**
   * After a recovery, failures within this long are answered as an outage but not logged as a new one
   * (ms): connections that reconnect later than the first, and calls that started before, fail a moment
   * longer.
   */
  settleMs?: number;
}

/** One per process (see outageMonitorOf): the state of each dependency and its two log lines. */
export function createOutageMonitor(logger: Logger, options: OutageMonitorOptions = {}): OutageMonitor {
  const probeIntervalMs = options.probeIntervalMs ?? 500;
  const settleMs = options.settleMs ?? 5_000;
  const downSince = new Map<Dependency, number>();
  const upSince = new Map<Dependency, number>();
  const pools: PoolLike[] = [];
  let probe: NodeJS.Timeout | undefined;

  const startProbe = () => {
    if (probe || pools.length === 0) return;
    probe = setInterval(() => {
      for (const pool of pools) {
        pool.query('select 1').then(
          () => monitor.answered('postgres'),
          () => {},
        );
      }
    }, probeIntervalMs);
    probe.unref();
  };

  const markDown = (dependency: Dependency, error: unknown) => {
    if (downSince.has(dependency)) return;
    const up = upSince.get(dependency);
    if (up !== undefined && Date.now() - up < settleMs) return;
    downSince.set(dependency, Date.now());
    logger.warn({ dependency, reason: outageReason(error) }, `${dependency} unavailable`);
    if (dependency === 'postgres') startProbe();
  };

  const monitor: OutageMonitor = {
    failed(error, dependency) {
      const found = dependency ?? dependencyOutageOf(error);
      if (!found) return undefined;
      markDown(found, error);
      return found;
    },
    answered(dependency) {
      const since = downSince.get(dependency);
      if (since === undefined) return;
      downSince.delete(dependency);
      upSince.set(dependency, Date.now());
      if (dependency === 'postgres' && probe) {
        clearInterval(probe);
        probe = undefined;
      }
      logger.info({ dependency, downMs: Date.now() - since }, `${dependency} recovered`);
    },
    isDown: (dependency) => downSince.has(dependency),
    watchPostgres(pool) {
      pools.push(pool);
      pool.on('connect', () => monitor.answered('postgres'));
      if (downSince.has('postgres')) startProbe();
    },
    watchRedis(redis) {
      redis.on('error', (error) => markDown('redis', error));
      redis.on('ready', () => monitor.answered('redis'));
    },
  };
  return monitor;
}

const monitors = new WeakMap<Logger, OutageMonitor>();

/**
 * The outage monitor of a process's root logger, made on first use: the error writers and the
 * connection watchers of one app reach the same one without passing it through every layer.
 */
export function outageMonitorOf(logger: Logger): OutageMonitor {
  let monitor = monitors.get(logger);
  if (!monitor) {
    monitor = createOutageMonitor(logger);
    monitors.set(logger, monitor);
  }
  return monitor;
}

/**
 * ioredis settings for request-path clients: while the connection is down a command fails at once
 * instead of waiting in the offline queue (readiness checks keep traffic away until the first connect),
 * one sent just before the connection dropped is retried once, a command on a connection that went
 * silent fails after `commandTimeoutMs`, and reconnects are tried at least every second so the app
 * resumes soon after Redis is back. Not for BullMQ workers' blocking connections (they must wait).
 */
export function requestRedisOptions(commandTimeoutMs = 5_000) {
  return {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    commandTimeout: commandTimeoutMs,
    connectTimeout: 5_000,
    retryStrategy: (times: number) => Math.min(times * 50, 1_000),
  };
}
