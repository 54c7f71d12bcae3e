import type { Redis } from 'ioredis';

// Requests per key in a fixed window, counted in Redis by one Lua script, so concurrent requests can
// never pass the limit together: reports per client address, and publishing's limits (publishes per
// address, webhook deliveries per address and per repository; docs/publishing.md).

/** INCR the window's counter, start its expiry on the first report; returns [count, ms left]. */
const SCRIPT = `
local n = redis.call('INCR', KEYS[1])
if n == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  ttl = tonumber(ARGV[1])
end
return {n, ttl}`;

type WithReportCommand = Redis & {
  pkgregReportCount(key: string, windowMs: number): Promise<[number, number]>;
};

export interface WindowLimiter {
  /** Counts a request of `key` (an address, a repository id); `allowed` false past the limit, with the seconds to wait. */
  take(key: string): Promise<{ allowed: boolean; retryAfterSeconds: number }>;
}

export type ReportLimiter = WindowLimiter;

/** A limiter of its own Redis keys (`pkgreg:registry:<name>:<key>`). */
export function createWindowLimiter(
  redis: Redis,
  options: { name: string; perWindow: number; windowMs: number },
): WindowLimiter {
  const client = redis as WithReportCommand;
  if (typeof client.pkgregReportCount !== 'function') {
    redis.defineCommand('pkgregReportCount', { numberOfKeys: 1, lua: SCRIPT });
  }
  return {
    async take(key) {
      const [count, ttl] = await client.pkgregReportCount(
        `pkgreg:registry:${options.name}:${key}`,
        options.windowMs,
      );
      return { allowed: count <= options.perWindow, retryAfterSeconds: Math.max(1, Math.ceil(ttl / 1000)) };
    },
  };
}

export function createReportLimiter(
  redis: Redis,
  options: { perWindow: number; windowMs: number },
): ReportLimiter {
  return createWindowLimiter(redis, { name: 'reports', ...options });
}
