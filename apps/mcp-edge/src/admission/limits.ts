import { RejectError } from '@pkgreg/contracts';
import type { Redis } from 'ioredis';

// Per-tool request rate and the invoke/compact quotas in fixed one-minute windows per namespace + token
// (decisions.md). STYLE.md §16: the counting is one Lua script, loaded with defineCommand, so concurrent
// requests (on one edge or on several) can never both take the last unit of a window.

// One call checks every request read in one event-loop turn. Checks with the same keys (one token's
// concurrent calls of one tool) form a group, counted with one INCRBY of the group's size: the counters
// end where as many INCRs would leave them, and the group's first `passed` checks are those the rate lets
// through, the first `admitted` of them those the quota lets through too, exactly as one INCR after the
// other would have decided them.
//
// Leases (a rate without a quota): a key whose units run out within LEASE_HOT_MS of its last call to
// Redis asks for `lease` units more than its group needs, and the edge admits that many later checks
// of the key by itself, with no round trip (docs/decisions.md, "Rate-limit leases"). Redis counts leased
// units as used, and grants a lease only out of an eighth of what is left in the window after the
// group, so near the limit leases shrink to none and every check is counted in Redis again. One edge
// admits exactly what one INCR per check would; several edges never admit more than the limit, and may
// admit less by the units another edge leased and did not use (at most an eighth of what was left).
//
// KEYS: per group its rate key, then its quota key when it has a quota. ARGV[1]: the keys' ttl; then per
// group: its size, the rate limit, the quota limit (0: no quota), the lease asked for (0 with a quota).
// Reply: per group `passed`, `admitted`, `leased`.
const LIMIT_SCRIPT = `
local ttl = ARGV[1]
local replies = {}
local k = 1
for g = 0, (#ARGV - 1) / 4 - 1 do
  local n, rateLimit = tonumber(ARGV[g * 4 + 2]), tonumber(ARGV[g * 4 + 3])
  local quotaLimit, lease = tonumber(ARGV[g * 4 + 4]), tonumber(ARGV[g * 4 + 5])
  if lease > 0 then
    local before = tonumber(redis.call('GET', KEYS[k]) or '0')
    lease = math.max(0, math.min(lease, math.floor((rateLimit - before - n) / 8)))
  end
  local rate = redis.call('INCRBY', KEYS[k], n + lease)
  if rate == n + lease then redis.call('EXPIRE', KEYS[k], ttl) end
  k = k + 1
  local passed = math.max(0, math.min(n, rateLimit - (rate - n - lease)))
  local admitted = passed
  if quotaLimit > 0 then
    if passed > 0 then
      local used = redis.call('INCRBY', KEYS[k], passed)
      if used == passed then redis.call('EXPIRE', KEYS[k], ttl) end
      admitted = math.max(0, math.min(passed, quotaLimit - (used - passed)))
    end
    k = k + 1
  end
  replies[g * 3 + 1] = passed
  replies[g * 3 + 2] = admitted
  replies[g * 3 + 3] = lease
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
  /** The key's lease (a rate without a quota), which takes the units Redis leases to this group. */
  lease: Lease | undefined;
  waiters: Array<{ resolve(): void; reject(error: unknown): void }>;
}

/** Units of one rate key (one window) that Redis counted as used and this edge has not handed out yet. */
interface Lease {
  units: number;
  /** Units asked for beyond the group at the key's last call to Redis. */
  size: number;
  /** When the key last called Redis (ms). */
  askedAt: number;
}

const WINDOW_SECONDS = 60;
/** Groups per script call: one call runs alone in Redis, and a very busy turn must not hold it for long. */
const MAX_GROUPS_PER_CALL = 256;
/** A key is hot when it calls Redis again within this long: its lease doubles, else it halves. */
const LEASE_HOT_MS = 100;
/** The most units one call leases: at 25k checks/s a lease lasts 40 ms. */
const MAX_LEASE = 1024;
/** Keys with lease state in one window; past it the state starts over (leased units are lost, never over-admitted). */
const MAX_LEASE_KEYS = 100_000;
const ADMITTED: Promise<void> = Promise.resolve();

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
  // `setImmediate`: a check not taken from a lease waits for exactly one round trip. (ioredis's auto-pipelining
  // flushes on `nextTick`, after each socket's callback, so under load it wrote one packet per request.)
  let pending = new Map<string, Group>();
  let scheduled = false;
  // Lease state of the current window by namespace, token and tool; dropped when the window turns.
  // The caller's strings are the same objects on every call (the token cache's AuthInfo, the tool
  // catalog's names), whose hashes V8 keeps: a lookup here hashes nothing, where a rate key built per
  // call would be hashed whole (~140 characters) each time.
  let leases = new Map<string, Map<string, Map<string, Lease>>>();
  let leaseKeys = 0;
  let leaseWindow = -1;

  /** The lease to ask for with a group of the key, whose leased units (if any) are spent. */
  function leaseFor(namespace: string, tokenId: string, tool: string, ms: number): Lease {
    let lease = leases.get(namespace)?.get(tokenId)?.get(tool);
    if (!lease) {
      if (leaseKeys >= MAX_LEASE_KEYS) {
        leases = new Map();
        leaseKeys = 0;
      }
      let byToken = leases.get(namespace);
      if (!byToken) {
        byToken = new Map();
        leases.set(namespace, byToken);
      }
      let byTool = byToken.get(tokenId);
      if (!byTool) {
        byTool = new Map();
        byToken.set(tokenId, byTool);
      }
      lease = { units: 0, size: 0, askedAt: ms };
      byTool.set(tool, lease);
      leaseKeys += 1;
      return lease;
    }
    lease.size =
      ms - lease.askedAt < LEASE_HOT_MS ? Math.min(MAX_LEASE, Math.max(1, lease.size * 2)) : lease.size >> 1;
    lease.askedAt = ms;
    return lease;
  }

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
      args.push(g.waiters.length, g.rate, g.quota, g.lease?.size ?? 0);
    }
    (redis as LimitRedis).pkgregEdgeLimits(keys.length, ...keys, ...args).then(
      (replies) => {
        groups.forEach((g, i) => {
          const leased = replies[i * 3 + 2];
          if (g.lease && leased) g.lease.units += leased;
          settle(g, replies[i * 3], replies[i * 3 + 1]);
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
      const ms = now();
      const seconds = Math.floor(ms / 1000);
      const window = Math.floor(seconds / WINDOW_SECONDS);
      if (window !== leaseWindow) {
        leases = new Map();
        leaseKeys = 0;
        leaseWindow = window;
      }
      if (!quota) {
        const lease = leases.get(namespace)?.get(tokenId)?.get(tool);
        if (lease && lease.units > 0) {
          lease.units -= 1;
          return ADMITTED;
        }
      }
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
            lease: quota ? undefined : leaseFor(namespace, tokenId, tool, ms),
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
