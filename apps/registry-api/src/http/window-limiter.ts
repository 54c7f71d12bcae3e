import type { Redis } from 'ioredis';

// Requests per client in a fixed window, counted in Redis by one Lua script, so concurrent requests
// from one client can never pass the limit together. Reports and track use it.

/**
 * For each key, INCRBY its window's counter by the requests of that client, start its expiry on the
 * first request; returns [count, ms left] per key, in order.
 */
const SCRIPT = `
local out = {}
for i, key in ipairs(KEYS) do
  local add = tonumber(ARGV[i + 1])
  local n = redis.call('INCRBY', key, add)
  if n == add then redis.call('PEXPIRE', key, ARGV[1]) end
  local ttl = redis.call('PTTL', key)
  if ttl < 0 then
    redis.call('PEXPIRE', key, ARGV[1])
    ttl = tonumber(ARGV[1])
  end
  out[2 * i - 1] = n
  out[2 * i] = ttl
end
return out`;

type WithWindowCommand = Redis & {
  /** numkeys, the keys, the window (ms), then each key's increment. */
  pkgregWindowCount(...args: Array<string | number>): Promise<number[]>;
};

export interface WindowVerdict {
  allowed: boolean;
  /** Seconds until the client's window ends (at least 1). */
  retryAfterSeconds: number;
}

export interface WindowLimiter {
  /** Counts a request from `client`; `allowed` false past the limit, with the seconds to wait. */
  take(client: string): Promise<WindowVerdict>;
}

export interface WindowLimiterOptions {
  /** Redis key of a client's window: this prefix and the client. */
  keyPrefix: string;
  perWindow: number;
  windowMs: number;
}

interface Waiter {
  resolve(verdict: WindowVerdict): void;
  reject(error: unknown): void;
}

/**
 * The requests of one event-loop turn go to Redis as ONE script call, each client's counted by one
 * INCRBY, and each request gets the verdict its place in that count deserves: track calls come by the
 * thousand a second, and a round trip each cost more than the rest of the limit (docs/benchmarks.md).
 */
export function createWindowLimiter(redis: Redis, options: WindowLimiterOptions): WindowLimiter {
  const client = redis as WithWindowCommand;
  if (typeof client.pkgregWindowCount !== 'function') {
    redis.defineCommand('pkgregWindowCount', { lua: SCRIPT });
  }
  let pending = new Map<string, Waiter[]>();
  let scheduled = false;

  const flush = () => {
    scheduled = false;
    const batch = pending;
    pending = new Map();
    const keys = [...batch.keys()];
    const adds = keys.map((key) => batch.get(key)?.length ?? 0);
    client.pkgregWindowCount(keys.length, ...keys, options.windowMs, ...adds).then(
      (counts) => {
        keys.forEach((key, i) => {
          const waiters = batch.get(key) ?? [];
          const total = counts[2 * i] ?? 0;
          const retryAfterSeconds = Math.max(1, Math.ceil((counts[2 * i + 1] ?? 0) / 1000));
          // The window counted `total` up to and including this turn's requests, which came in order.
          const before = total - waiters.length;
          waiters.forEach((w, j) => {
            w.resolve({ allowed: before + j + 1 <= options.perWindow, retryAfterSeconds });
          });
        });
      },
      (error: unknown) => {
        for (const waiters of batch.values()) for (const w of waiters) w.reject(error);
      },
    );
  };

  return {
    take(id) {
      return new Promise<WindowVerdict>((resolve, reject) => {
        const key = `${options.keyPrefix}${id}`;
        const waiters = pending.get(key);
        if (waiters) waiters.push({ resolve, reject });
        else pending.set(key, [{ resolve, reject }]);
        if (!scheduled) {
          scheduled = true;
          setImmediate(flush);
        }
      });
    },
  };
}
