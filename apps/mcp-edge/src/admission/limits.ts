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

type LimitArgs = [rateKey: string, quotaKey: string, rate: number, quota: number, ttl: number];
type LimitPipeline = ReturnType<Redis['pipeline']> & { pkgregEdgeLimit(...args: LimitArgs): unknown };

interface PendingCheck {
  args: LimitArgs;
  resolve(verdict: number): void;
  reject(error: unknown): void;
}

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
  if (!('pkgregEdgeLimit' in redis)) {
    redis.defineCommand('pkgregEdgeLimit', { numberOfKeys: 2, lua: LIMIT_SCRIPT });
  }
  // Every request still makes its own script call in one round trip; the calls of all requests read in
  // one event-loop turn go out as one pipeline on the next `setImmediate`. ioredis's auto-pipelining
  // flushes on `nextTick`, i.e. after each socket's callback, so under load it wrote (and the server
  // read) one Redis packet per request: a syscall pair that cost the edge more CPU than the script.
  let pending: PendingCheck[] = [];
  function flush(): void {
    const batch = pending;
    pending = [];
    const pipeline = redis.pipeline() as LimitPipeline;
    for (const check of batch) pipeline.pkgregEdgeLimit(...check.args);
    pipeline.exec().then(
      (replies) => {
        batch.forEach((check, i) => {
          const [error, verdict] = replies?.[i] ?? [new Error('no reply from Redis'), null];
          if (error) check.reject(error);
          else check.resolve(verdict as number);
        });
      },
      (error: unknown) => {
        for (const check of batch) check.reject(error);
      },
    );
  }
  function runScript(args: LimitArgs): Promise<number> {
    return new Promise((resolve, reject) => {
      if (!pending.length) setImmediate(flush);
      pending.push({ args, resolve, reject });
    });
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
      const verdict = await runScript([
        `edge:rate:${subject}:${tool}:${window}`,
        `edge:quota:${subject}:${quota ?? 'none'}:${window}`,
        rate,
        quotaLimit,
        WINDOW_SECONDS + 5,
      ]);
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
