import type { Redis } from 'ioredis';
import { LRUCache } from 'lru-cache';

// Requests per client in a fixed window, counted in Redis by one Lua script, shared by every API
// process. Reports and track use it.

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
  /**
   * Counts a request from `client`; `allowed` false past the limit, with the seconds to wait. A
   * verdict at once for a client whose window this process has read; else after Redis answers (it
   * rejects when Redis cannot be reached).
   */
  take(client: string): WindowVerdict | Promise<WindowVerdict>;
}

export interface WindowLimiterOptions {
  /** Redis key of a client's window: this prefix and the client. */
  keyPrefix: string;
  perWindow: number;
  windowMs: number;
}

/** One client's window as this process knows it. */
interface Window {
  key: string;
  /** The window's count in Redis at its last answer: every process's requests. */
  counted: number;
  /** Requests taken here and sent in a call not answered yet. */
  sending: number;
  /** Requests taken here and not sent yet. */
  unsent: number;
  /** When the window ends on this process's clock; 0 until Redis has answered once. */
  endsAt: number;
  /** Requests waiting for that first answer (the count they come after, in order). */
  waiters: Array<{ resolve(verdict: WindowVerdict): void; reject(error: unknown): void }>;
}

/** Windows kept per process, the least recently used dropped past this (their clients ask Redis again). */
const MAX_WINDOWS = 100_000;
/** How long counts of a client below half its limit may wait to be sent. */
const LAZY_SEND_MS = 50;

/**
 * The first request of a client's window waits for Redis, so it is counted against every process's
 * requests; from then on this process judges the client's requests itself, from Redis' last count
 * plus its own since, and sends its counts behind them in one script call for all clients: after the
 * event-loop turn for a client at half its limit or more, within LAZY_SEND_MS below that. A track
 * call thus waits on no round trip, and a busy process makes some twenty calls a second, not one per
 * turn (docs/benchmarks.md). Exact within one process; across processes a client can pass the limit
 * by the requests other processes judged and have not sent yet (below half the limit: at most
 * LAZY_SEND_MS of them). Redis away: waiting requests are rejected (the caller decides), judged ones
 * keep being judged on the counts known.
 */
export function createWindowLimiter(redis: Redis, options: WindowLimiterOptions): WindowLimiter {
  const client = redis as WithWindowCommand;
  if (typeof client.pkgregWindowCount !== 'function') {
    redis.defineCommand('pkgregWindowCount', { lua: SCRIPT });
  }
  const windows = new LRUCache<string, Window>({ max: MAX_WINDOWS });
  // Windows with requests to send (held here too: `windows` may drop them).
  let dirty = new Set<Window>();
  let scheduled: 'now' | 'lazy' | undefined;
  let lazyTimer: NodeJS.Timeout | undefined;

  const secondsLeft = (window: Window, at: number) => Math.max(1, Math.ceil((window.endsAt - at) / 1000));

  const send = () => {
    scheduled = undefined;
    if (lazyTimer) clearTimeout(lazyTimer);
    lazyTimer = undefined;
    const batch = [...dirty].flatMap((window) => {
      const add = window.unsent + window.waiters.length;
      return add > 0 ? [{ window, add, waiters: window.waiters.splice(0) }] : [];
    });
    dirty = new Set();
    if (batch.length === 0) return;
    for (const b of batch) {
      b.window.sending += b.add;
      b.window.unsent = 0;
    }
    const keys = batch.map((b) => b.window.key);
    // A client that throws instead of rejecting still settles every request in the batch.
    new Promise<number[]>((resolve) =>
      resolve(client.pkgregWindowCount(keys.length, ...keys, options.windowMs, ...batch.map((b) => b.add))),
    ).then(
      (counts) => {
        const at = Date.now();
        batch.forEach(({ window, add, waiters }, i) => {
          // Redis answers in order: `total` holds this call and those before, not a later one in flight.
          const total = counts[2 * i] ?? 0;
          window.sending -= add;
          window.counted = total;
          window.endsAt = at + (counts[2 * i + 1] ?? options.windowMs);
          // The waiters were counted last in this call, in the order they came.
          const before = total - waiters.length;
          const retryAfterSeconds = secondsLeft(window, at);
          waiters.forEach((w, j) => {
            w.resolve({ allowed: before + j + 1 <= options.perWindow, retryAfterSeconds });
          });
        });
      },
      (error: unknown) => {
        for (const { window, add, waiters } of batch) {
          // Kept as counted here, so the limit still holds in this process while Redis is away.
          window.sending -= add;
          window.counted += add - waiters.length;
          for (const w of waiters) w.reject(error);
        }
      },
    );
  };

  const schedule = (window: Window, soon: boolean) => {
    dirty.add(window);
    if (scheduled === 'now' || (scheduled === 'lazy' && !soon)) return;
    if (soon) {
      scheduled = 'now';
      // After the event loop has read the requests at hand, so they share the call.
      setImmediate(send);
    } else {
      scheduled = 'lazy';
      lazyTimer = setTimeout(send, LAZY_SEND_MS);
      lazyTimer.unref();
    }
  };

  return {
    take(id) {
      const key = `${options.keyPrefix}${id}`;
      const at = Date.now();
      let window = windows.get(key);
      if (window && window.endsAt > 0 && window.endsAt <= at) {
        windows.delete(key);
        window = undefined;
      }
      if (window && window.endsAt > 0) {
        window.unsent += 1;
        const n = window.counted + window.sending + window.unsent;
        schedule(window, 2 * n >= options.perWindow);
        return { allowed: n <= options.perWindow, retryAfterSeconds: secondsLeft(window, at) };
      }
      if (!window) {
        window = { key, counted: 0, sending: 0, unsent: 0, endsAt: 0, waiters: [] };
        windows.set(key, window);
      }
      const waiting = window;
      schedule(waiting, true);
      return new Promise<WindowVerdict>((resolve, reject) => waiting.waiters.push({ resolve, reject }));
    },
  };
}
