export interface RetryPolicy {
  /** Attempts in total, the first included. */
  attempts: number;
  /** First backoff delay; doubles per retry. */
  baseDelayMs: number;
  maxDelayMs: number;
  /** Longest Retry-After honoured; a longer one is waited for this long. */
  maxRetryAfterMs: number;
}

/** Retry-After in seconds (RFC 9110 also allows an HTTP date); undefined when absent or unreadable. */
export function retryAfterMs(value: string | undefined, now = Date.now()): number | undefined {
  if (value === undefined) return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  const date = Date.parse(trimmed);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/** The wait before retry number `retry` (0 first): exponential, with jitter. */
export function backoffMs(policy: RetryPolicy, retry: number): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** retry);
  // Jitter keeps many clients that failed together from retrying together.
  return Math.round(ceiling / 2 + Math.random() * (ceiling / 2));
}
