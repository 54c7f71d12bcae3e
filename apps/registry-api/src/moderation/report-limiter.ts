import type { Redis } from 'ioredis';
import { createWindowLimiter, type WindowLimiter } from '../http/window-limiter.js';

/** Reports per client address: a fixed window per address in Redis (http/window-limiter.ts). */
export type ReportLimiter = WindowLimiter;

export function createReportLimiter(
  redis: Redis,
  options: { perWindow: number; windowMs: number },
): ReportLimiter {
  return createWindowLimiter(redis, { keyPrefix: 'pkgreg:registry:reports:', ...options });
}
