import { RejectError } from '@pkgreg/contracts';
import type { Redis } from 'ioredis';

// Per-tool request rate and the invoke/compact quotas in fixed one-minute windows per namespace + token
// (decisions.md). STYLE.md §16: one Lua script, loaded with defineCommand, one round trip per request, so
// concurrent requests can never both take the last unit of a window.

// One call checks every request read in one event-loop turn. Checks with the same keys (one token's
// concurrent calls of one tool) form a group, counted with one INCRBY of the group's size: the counters
// end where as many INCRs would leave them, and the group's first `passed` checks are those the rate lets
// through, the first `admitted` of them those the quota lets through too, exactly as one INCR after the
// other would have decided them.
// KEYS: per group its rate key, then its quota key when it has a quota. ARGV[1]: the keys' ttl; then per
// group: its size, the rate limit, the quota limit (0: no quota). Reply: per group `passed`, `admitted`.
const LIMIT_SCRIPT = `
local ttl = ARGV[1]
local replies = {}
local k = 1
for g = 0, (#ARGV - 1) / 3 - 1 do
  local n, rateLimit, quotaLimit = tonumber(ARGV[g * 3 + 2]), tonumber(ARGV[g * 3 + 3]), tonumber(ARGV[g * 3 + 4])
  local rate = redis.call('INCRBY', KEYS[k], n)
  if rate == n then redis.call('EXPIRE', KEYS[k], ttl) end
  k = k + 1
  local passed = math.max(0, math.min(n, rateLimit - (rate - n)))
  local admitted = passed
  if quotaLimit > 0 then
    if passed > 0 then
      local used = redis.call('INCRBY', KEYS[k], passed)
      if used == passed then redis.call('EXPIRE', KEYS[k], ttl) end
      admitted = math.max(0, math.min(passed, quotaLimit - (used - passed)))
    end
    k = k + 1
  end
  replies[g * 2 + 1] = passed
  replies[g * 2 + 2] = admitted
end
return replies
`;

type LimitRedis = Redis & {
  pkgregEdgeLimits(keyCount: number, ...keysThenArgs: Array<string | number>): Promise<number[]>;
};

/** Checks of one turn with the same keys; each waiter gets the verdict of its place in the group. */
interface Group {
  rateKey: string;
  quotaKey: string | undefined;
  rate: number;
  quota: number;
  retryAfterSeconds: number;
  tool: string;
  quotaKind: QuotaKind | undefined;
  waiters: Array<{ resolve(): void; reject(error: unknown): void }>;
}

const WINDOW_SECONDS = 60;
/** Groups per script call: one call runs alone in Redis, and a very busy turn must not hold it for long. */
const MAX_GROUPS_PER_CALL = 256;

export type QuotaKind = 'invoke' | 'compact';

export interface LimiterConfig {
  ratePerMinute: number;
  /** Per-tool overrides of ratePerMinute. */
  rateOverrides: Record<string, number>;
  invokePerMinute: number;
  compactPerMinute: number;
}

export interface Limiter {
  /** Counts one request against the rate of `tool` and, when given, the quota; throws when over either. */
  check(input: { namespace: string; tokenId: string; tool: string; quota?: QuotaKind }): Promise<void>;
}

export function createLimiter(redis: Redis, config: LimiterConfig, now: () => number = Date.now): Limiter {
  if (!('pkgregEdgeLimits' in redis)) redis.defineCommand('pkgregEdgeLimits', { lua: LIMIT_SCRIPT });
  // The checks of all requests read in one event-loop turn go to Redis as ONE script call, on the next
  // `setImmediate`: each request still waits for exactly one round trip. (ioredis's auto-pipelining
  // flushes on `nextTick`, after each socket's callback, so under load it wrote one packet per request.)
  let pending = new Map<string, Group>();
  let scheduled = false;

  function flush(): void {
    const groups = [...pending.values()];
    pending = new Map();
    if (groups.length) send(groups);
  }

  function flushSoon(): void {
    if (scheduled) return;
    scheduled = true;
    setImmediate(() => {
      scheduled = false;
      flush();
    });
  }

  function send(groups: Group[]): void {
    const keys: string[] = [];
    const args: number[] = [WINDOW_SECONDS + 5];
    for (const g of groups) {
      keys.push(g.rateKey);
      if (g.quotaKey !== undefined) keys.push(g.quotaKey);
      args.push(g.waiters.length, g.rate, g.quota);
    }
    (redis as LimitRedis).pkgregEdgeLimits(keys.length, ...keys, ...args).then(
      (replies) => {
        groups.forEach((g, i) => {
          settle(g, replies[i * 2], replies[i * 2 + 1]);
        });
      },
      (error: unknown) => {
        for (const g of groups) for (const w of g.waiters) w.reject(error);
      },
    );
  }

  function settle(g: Group, passed: number | undefined, admitted: number | undefined): void {
    if (passed === undefined || admitted === undefined) {
      const error = new Error('no verdict from Redis');
      for (const w of g.waiters) w.reject(error);
      return;
    }
    g.waiters.forEach((w, place) => {
      if (place < admitted) w.resolve();
      else if (place < passed) {
        w.reject(
          new RejectError('quota_exceeded', `more than ${g.quota} ${g.quotaKind} requests per minute`, {
            retryAfterSeconds: g.retryAfterSeconds,
            limit: g.quota,
          }),
        );
      } else {
        w.reject(
          new RejectError('rate_limited', `more than ${g.rate} ${g.tool} requests per minute`, {
            retryAfterSeconds: g.retryAfterSeconds,
            limit: g.rate,
          }),
        );
      }
    });
  }

  return {
    check({ namespace, tokenId, tool, quota }) {
      const seconds = Math.floor(now() / 1000);
      const window = Math.floor(seconds / WINDOW_SECONDS);
      const subject = `${namespace}:${tokenId}`;
      const rateKey = `edge:rate:${subject}:${tool}:${window}`;
      const groupKey = quota ? `${rateKey}\n${quota}` : rateKey;
      return new Promise<void>((resolve, reject) => {
        let group = pending.get(groupKey);
        if (!group) {
          if (pending.size >= MAX_GROUPS_PER_CALL) flush();
          group = {
            rateKey,
            quotaKey: quota ? `edge:quota:${subject}:${quota}:${window}` : undefined,
            rate: config.rateOverrides[tool] ?? config.ratePerMinute,
            quota:
              quota === 'invoke' ? config.invokePerMinute : quota === 'compact' ? config.compactPerMinute : 0,
            retryAfterSeconds: WINDOW_SECONDS - (seconds % WINDOW_SECONDS),
            tool,
            quotaKind: quota,
            waiters: [],
          };
          pending.set(groupKey, group);
          flushSoon();
        }
        group.waiters.push({ resolve, reject });
      });
    },
  };
}
