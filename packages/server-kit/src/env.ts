import { z } from 'zod';
import { tracingEnvShape } from './tracing.js';

// Shared pieces of each app's env.ts, so common settings read the same in every app; each app still
// parses its own schema once at start.

/** A boolean flag read explicitly: z.coerce.boolean() would turn "false" into true. */
export const booleanFlag = (fallback: boolean) =>
  z
    .enum(['true', 'false', '1', '0', 'yes', 'no'])
    .optional()
    .transform((v) => (v === undefined ? fallback : v === 'true' || v === '1' || v === 'yes'));

/** `PORT=` (set but empty, common in compose files) means unset: z.coerce would make it port 0. */
export const port = (fallback: number) =>
  z.preprocess(
    (v) => (v === '' ? undefined : v),
    z.coerce.number().int().min(0).max(65535).default(fallback),
  );

export const commonEnvShape = {
  NODE_ENV: z.enum(['development', 'test', 'production']).default('development'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  DATABASE_URL: z.url().default('postgres://postgres@127.0.0.1:5432/pkgreg'),
  REDIS_URL: z.url().default('redis://127.0.0.1:6379'),
  // OpenTelemetry traces: the standard OTEL_* variables, off unless an OTLP endpoint is set (tracing.ts).
  ...tracingEnvShape,
};

/** Bounds on slow clients, for apps that serve HTTP (listen.ts, `serverTimeouts(env)`). */
export const httpServerEnvShape = {
  /** Request line and headers must arrive within this (slowloris). */
  HTTP_HEADERS_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(10_000),
  /** The whole request, body included, must arrive within this; responses may take longer. */
  HTTP_REQUEST_TIMEOUT_MS: z.coerce.number().int().min(100).max(3_600_000).default(30_000),
  /** Idle keep-alive sockets are closed after this; above a load balancer's idle timeout (often 60 s). */
  HTTP_KEEP_ALIVE_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(65_000),
  /**
   * Which hops' X-Forwarded-For Express believes, so per-client limits key on the client, not on the
   * ingress: a hop count ("1"), or addresses, CIDRs and Express's names ("loopback", "uniquelocal"),
   * comma-separated. Only peers listed here can claim another client address.
   */
  TRUST_PROXY: z
    .string()
    .trim()
    .regex(/^(\d{1,2}|[\w.:/]+(\s*,\s*[\w.:/]+)*)$/, 'a hop count, or addresses/CIDRs/names, comma-separated')
    .default('loopback')
    .transform((v): number | string[] => (/^\d+$/.test(v) ? Number(v) : v.split(/\s*,\s*/))),
};

/**
 * For apps that keep their own keys in Redis (rate-limit counters, one-time codes): a prefix to every
 * key, so deployments (or test processes) sharing one Redis keep apart. BullMQ queues have theirs
 * (QUEUE_PREFIX). Empty: the keys as named.
 */
export const redisKeysEnvShape = {
  REDIS_KEY_PREFIX: z
    .string()
    .max(100)
    .regex(/^[\w.:-]*$/, 'letters, digits and . _ : -')
    .default(''),
};

/** ioredis options for `REDIS_KEY_PREFIX` (none when it is empty). */
export function redisKeyOptions(env: { REDIS_KEY_PREFIX: string }): { keyPrefix?: string } {
  return env.REDIS_KEY_PREFIX ? { keyPrefix: env.REDIS_KEY_PREFIX } : {};
}

/** Parses `source` with `schema`; on failure throws one message naming every bad variable (values never shown). */
export function parseEnv<S extends z.ZodType>(
  schema: S,
  source: Record<string, string | undefined>,
): z.infer<S> {
  const result = schema.safeParse(source);
  if (!result.success) {
    const lines = result.error.issues.map((i) => `  ${i.path.join('.') || '(root)'}: ${i.message}`);
    throw new Error(`invalid environment:\n${lines.join('\n')}`);
  }
  return result.data;
}
