import type { Redis } from 'ioredis';

// Requests per client in a fixed window, counted in Redis by one Lua script, so concurrent requests
// from one client can never pass the limit together. Reports and track use it.

/** INCR the window's counter, start its expiry on the first request; returns [count, ms left]. */
const SCRIPT = `
local n = redis.call('INCR', KEYS[1])
if n == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  ttl = tonumber(ARGV[1])
end
return {n, ttl}`;

type WithWindowCommand = Redis & {
  pkgregWindowCount(key: string, windowMs: number): Promise<[number, number]>;
};

export interface WindowLimiter {
  /** Counts a request from `client`; `allowed` false past the limit, with the seconds to wait. */
  take(client: string): Promise<{ allowed: boolean; retryAfterSeconds: number }>;
}

export interface WindowLimiterOptions {
  /** Redis key of a client's window: this prefix and the client. */
  keyPrefix: string;
  perWindow: number;
  windowMs: number;
}

export function createWindowLimiter(redis: Redis, options: WindowLimiterOptions): WindowLimiter {
  const client = redis as WithWindowCommand;
  if (typeof client.pkgregWindowCount !== 'function') {
    redis.defineCommand('pkgregWindowCount', { numberOfKeys: 1, lua: SCRIPT });
  }
  return {
    async take(id) {
      const [count, ttl] = await client.pkgregWindowCount(`${options.keyPrefix}${id}`, options.windowMs);
      return { allowed: count <= options.perWindow, retryAfterSeconds: Math.max(1, Math.ceil(ttl / 1000)) };
    },
  };
}
