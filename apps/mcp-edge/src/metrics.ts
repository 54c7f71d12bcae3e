import { ERROR_WIRE_FORMS, TOOL_NAMES } from '@pkgreg/contracts';
import { type Db, poolOf } from '@pkgreg/db';
import {
  Counter,
  createHttpMetrics,
  createMetricsRegistry,
  createPoolMetrics,
  createRedisMetrics,
  FastCounter,
  FastHistogram,
  type HistogramSeries,
  type HttpMetrics,
  LATENCY_BUCKETS,
  type PoolMetrics,
  type RedisMetrics,
  type Registry,
} from '@pkgreg/server-kit';
import type { Redis } from 'ioredis';

// The edge's Prometheus metrics (server-kit metrics.ts; served on METRICS_PORT by index.ts): every
// POST /mcp by JSON-RPC method, tool and outcome, refusals by reason, the token cache, pool and Redis.
// Method and tool names are the caller's words: only known ones become label values, the rest `other`.

/** The JSON-RPC methods the edge answers or acknowledges. */
const MCP_METHODS = new Set([
  'initialize',
  'ping',
  'tools/list',
  'tools/call',
  'tasks/get',
  'tasks/result',
  'resources/list',
  'resources/templates/list',
  'resources/read',
  'resources/directory/read',
  'skills/list',
  'skills/get',
  'notifications/initialized',
  'notifications/cancelled',
]);
const TOOLS = new Set<string>(Object.values(TOOL_NAMES));
const REASONS = new Set<string>(Object.keys(ERROR_WIRE_FORMS));

type Outcome = 'ok' | 'rejected' | 'error';

export interface EdgeMetrics {
  readonly registry: Registry;
  /** HTTP requests by route template (index.ts wraps the edge's listener with `http.instrument`). */
  readonly http: HttpMetrics;
  readonly pools: PoolMetrics;
  readonly redis: RedisMetrics;
  /** One POST /mcp: its method and tool as sent (null when unreadable), its reject reason (null: ok). */
  observeMcp(method: string | null, tool: string | null, reason: string | null, seconds: number): void;
  /** A bearer token looked up in the verified-token cache. */
  tokenCacheLookup(hit: boolean): void;
  /** Watches the pool under `db` (as `main`) and `redis`. */
  watchConnections(db: Db, redis: Redis): void;
}

export function createEdgeMetrics(registry: Registry = createMetricsRegistry()): EdgeMetrics {
  const http = createHttpMetrics(registry);
  const pools = createPoolMetrics(registry);
  const redisMetrics = createRedisMetrics(registry);
  const duration = new FastHistogram(
    'pkgreg_mcp_request_duration_seconds',
    'POST /mcp requests by JSON-RPC method, tool (tools/call) and outcome (ok, rejected, error)',
    ['method', 'tool', 'outcome'] as const,
    LATENCY_BUCKETS,
    registry,
  );
  const rejects = new Counter({
    name: 'pkgreg_mcp_rejects_total',
    help: 'POST /mcp requests refused, by JSON-RPC method, tool and reason (admission, quota, rate limit…)',
    labelNames: ['method', 'tool', 'reason'] as const,
    registers: [registry],
  });
  const tokenCache = new FastCounter(
    'pkgreg_token_cache_lookups_total',
    'Bearer tokens looked up in the verified-token cache, by result (hit, miss)',
    ['result'] as const,
    registry,
  );
  const hits = tokenCache.labels({ result: 'hit' });
  const misses = tokenCache.labels({ result: 'miss' });
  // Children by method, then tool, then outcome: found without building a key string.
  const children = new Map<string, Map<string, Record<Outcome, HistogramSeries>>>();
  const childOf = (method: string, tool: string, outcome: Outcome) => {
    let byTool = children.get(method);
    if (!byTool) {
      byTool = new Map();
      children.set(method, byTool);
    }
    let byOutcome = byTool.get(tool);
    if (!byOutcome) {
      byOutcome = {
        ok: duration.labels({ method, tool, outcome: 'ok' }),
        rejected: duration.labels({ method, tool, outcome: 'rejected' }),
        error: duration.labels({ method, tool, outcome: 'error' }),
      };
      byTool.set(tool, byOutcome);
    }
    return byOutcome[outcome];
  };

  return {
    registry,
    http,
    pools,
    redis: redisMetrics,
    observeMcp(rawMethod, rawTool, reason, seconds) {
      const method = rawMethod === null ? 'none' : MCP_METHODS.has(rawMethod) ? rawMethod : 'other';
      const tool = rawTool === null ? 'none' : TOOLS.has(rawTool) ? rawTool : 'other';
      const outcome: Outcome = reason === null ? 'ok' : reason === 'internal_error' ? 'error' : 'rejected';
      childOf(method, tool, outcome).observe(seconds);
      if (reason !== null) rejects.inc({ method, tool, reason: REASONS.has(reason) ? reason : 'other' });
    },
    tokenCacheLookup(hit) {
      (hit ? hits : misses).inc();
    },
    watchConnections(db, redis) {
      const pool = poolOf(db);
      if (pool) pools.watch('main', pool);
      redisMetrics.watch(redis);
    },
  };
}
