import { RejectError } from '@pkgreg/contracts';
import type { Redis } from 'ioredis';

// Per-tool request rate and the invoke/compact quotas in fixed one-minute windows per namespace + token
// (decisions.md). STYLE.md §16: one Lua script, loaded with defineCommand, one round trip per request, so
// concurrent requests can never both take the last unit of a window.

const LIMIT_SCRIPT = `
local rate = redis.call('INCR', KEYS[1])
if rate == 1 then redis.call('EXPIRE', KEYS[1], ARGV[3]) end
if rate > tonumber(ARGV[1]) then return 1 end
if tonumber(ARGV[2]) > 0 then
  local used = redis.call('INCR', KEYS[2])
  if used == 1 then redis.call('EXPIRE', KEYS[2], ARGV[3]) end
  if used > tonumber(ARGV[2]) then return 2 end
end
return 0
`;

type LimitRedis = Redis & {
  pkgregEdgeLimit(
    rateKey: string,
    quotaKey: string,
    rate: number,
    quota: number,
    ttl: number,
  ): Promise<number>;
};

const WINDOW_SECONDS = 60;

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
  const r = redis as LimitRedis;
  if (typeof r.pkgregEdgeLimit !== 'function') {
    redis.defineCommand('pkgregEdgeLimit', { numberOfKeys: 2, lua: LIMIT_SCRIPT });
  }
  return {
    async check({ namespace, tokenId, tool, quota }) {
      const seconds = Math.floor(now() / 1000);
      const window = Math.floor(seconds / WINDOW_SECONDS);
      const retryAfterSeconds = WINDOW_SECONDS - (seconds % WINDOW_SECONDS);
      const subject = `${namespace}:${tokenId}`;
      const rate = config.rateOverrides[tool] ?? config.ratePerMinute;
      const quotaLimit =
        quota === 'invoke' ? config.invokePerMinute : quota === 'compact' ? config.compactPerMinute : 0;
      const verdict = await r.pkgregEdgeLimit(
        `edge:rate:${subject}:${tool}:${window}`,
        `edge:quota:${subject}:${quota ?? 'none'}:${window}`,
        rate,
        quotaLimit,
        WINDOW_SECONDS + 5,
      );
      if (verdict === 1) {
        throw new RejectError('rate_limited', `more than ${rate} ${tool} requests per minute`, {
          retryAfterSeconds,
          limit: rate,
        });
      }
      if (verdict === 2) {
        throw new RejectError('quota_exceeded', `more than ${quotaLimit} ${quota} requests per minute`, {
          retryAfterSeconds,
          limit: quotaLimit,
        });
      }
    },
  };
}
