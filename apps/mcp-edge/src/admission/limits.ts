import { RejectError } from '@pkgreg/contracts';
import type { Redis } from 'ioredis';

// Per-tool request rate and the invoke/compact quotas in fixed one-minute windows per namespace, the
// client's identity (decisions.md, Quotas): every token of a client counts against one budget, so minting
// new tokens never adds to it. (A per-token bucket within it, at the same limits, could never refuse what
// the namespace's let through, so there is none.) The counting is one Lua script, loaded with
// defineCommand, so concurrent requests (on one edge or on several) can never both take the last unit of
// a window.
//
// One script call carries every check of an event-loop turn. Checks with the same keys form a group,
// counted with one INCRBY and given the verdicts one INCR each, in order, would have given them. A hot
// rate key (no quota) also asks for a lease of units that this edge then admits without a round trip;
// the script leases only out of an eighth of what the window has left, so edges together never admit
// more than the limit (docs/decisions.md, "Rate-limit leases").
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
/** The most units one call leases: what an edge may hold of a window without counting it in Redis. */
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
  /**
   * Counts one request of `namespace` (a client; an address for the token endpoint) against the rate of
   * `tool` and, when given, the quota; throws when over either.
   */
  check(input: { namespace: string; tool: string; quota?: QuotaKind }): Promise<void>;
}

export function createLimiter(redis: Redis, config: LimiterConfig, now: () => number = Date.now): Limiter {
  if (!('pkgregEdgeLimits' in redis)) redis.defineCommand('pkgregEdgeLimits', { lua: LIMIT_SCRIPT });
  // The checks of all requests read in one event-loop turn go to Redis as ONE script call, on the next
  // `setImmediate`: a check not taken from a lease waits for exactly one round trip. (ioredis's auto-pipelining
  // flushes on `nextTick`, after each socket's callback, so under load it wrote one packet per request.)
  let pending = new Map<string, Group>();
  let scheduled = false;
  const leases = new LeaseTable();

  function flush(): void {
    const groups = [...pending.values()];
    pending = new Map();
    if (groups.length) send(redis as LimitRedis, groups);
  }

  function flushSoon(): void {
    if (scheduled) return;
    scheduled = true;
    setImmediate(() => {
      scheduled = false;
      flush();
    });
  }

  return {
    check({ namespace, tool, quota }) {
      const ms = now();
      const seconds = Math.floor(ms / 1000);
      const window = Math.floor(seconds / WINDOW_SECONDS);
      leases.startWindow(window);
      if (!quota && leases.take(namespace, tool)) return ADMITTED;
      const rateKey = `edge:rate:${namespace}:${tool}:${window}`;
      const groupKey = quota ? `${rateKey}\n${quota}` : rateKey;
      return new Promise<void>((resolve, reject) => {
        let group = pending.get(groupKey);
        if (!group) {
          if (pending.size >= MAX_GROUPS_PER_CALL) flush();
          group = {
            rateKey,
            quotaKey: quota ? `edge:quota:${namespace}:${quota}:${window}` : undefined,
            rate: config.rateOverrides[tool] ?? config.ratePerMinute,
            quota:
              quota === 'invoke' ? config.invokePerMinute : quota === 'compact' ? config.compactPerMinute : 0,
            retryAfterSeconds: WINDOW_SECONDS - (seconds % WINDOW_SECONDS),
            tool,
            quotaKind: quota,
            lease: quota ? undefined : leases.forGroup(namespace, tool, ms),
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

/**
 * Lease state of the current window by namespace and tool. Keyed by the caller's own strings, the same
 * objects on every call (the token cache's AuthInfo, the catalog's names), whose hashes V8 keeps: a
 * lookup hashes nothing, where a rate key built per call would be hashed whole each time.
 */
class LeaseTable {
  private byNamespace = new Map<string, Map<string, Lease>>();
  private keys = 0;
  private window = -1;

  /** Leased units count in one window only: the table starts over when the window turns. */
  startWindow(window: number): void {
    if (window === this.window) return;
    this.byNamespace = new Map();
    this.keys = 0;
    this.window = window;
  }

  /** Takes one of the key's leased units, if it has one left. */
  take(namespace: string, tool: string): boolean {
    const lease = this.byNamespace.get(namespace)?.get(tool);
    if (!lease || lease.units <= 0) return false;
    lease.units -= 1;
    return true;
  }

  /** The lease to ask for with a group of the key, whose leased units (if any) are spent. */
  forGroup(namespace: string, tool: string, ms: number): Lease {
    let lease = this.byNamespace.get(namespace)?.get(tool);
    if (!lease) {
      if (this.keys >= MAX_LEASE_KEYS) {
        this.byNamespace = new Map();
        this.keys = 0;
      }
      let byTool = this.byNamespace.get(namespace);
      if (!byTool) {
        byTool = new Map();
        this.byNamespace.set(namespace, byTool);
      }
      lease = { units: 0, size: 0, askedAt: ms };
      byTool.set(tool, lease);
      this.keys += 1;
      return lease;
    }
    lease.size =
      ms - lease.askedAt < LEASE_HOT_MS ? Math.min(MAX_LEASE, Math.max(1, lease.size * 2)) : lease.size >> 1;
    lease.askedAt = ms;
    return lease;
  }
}

/** One script call for `groups`; each group's waiters are settled by its reply. */
function send(redis: LimitRedis, groups: Group[]): void {
  const keys: string[] = [];
  const args: number[] = [WINDOW_SECONDS + 5];
  for (const g of groups) {
    keys.push(g.rateKey);
    if (g.quotaKey !== undefined) keys.push(g.quotaKey);
    args.push(g.waiters.length, g.rate, g.quota, g.lease?.size ?? 0);
  }
  redis.pkgregEdgeLimits(keys.length, ...keys, ...args).then(
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
