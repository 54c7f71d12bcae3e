import type { Redis } from 'ioredis';

// Reports per client address: a fixed window counted in Redis by one Lua script, so concurrent reports
// from one address can never pass the limit together.

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

export interface ReportLimiter {
  /** Counts a report from `address`; `allowed` false past the limit, with the seconds to wait. */
  take(address: string): Promise<{ allowed: boolean; retryAfterSeconds: number }>;
}

export function createReportLimiter(
  redis: Redis,
  options: { perWindow: number; windowMs: number },
): ReportLimiter {
  const client = redis as WithReportCommand;
  if (typeof client.pkgregReportCount !== 'function') {
    redis.defineCommand('pkgregReportCount', { numberOfKeys: 1, lua: SCRIPT });
  }
  return {
    async take(address) {
      const [count, ttl] = await client.pkgregReportCount(
        `pkgreg:registry:reports:${address}`,
        options.windowMs,
      );
      return { allowed: count <= options.perWindow, retryAfterSeconds: Math.max(1, Math.ceil(ttl / 1000)) };
    },
  };
}
