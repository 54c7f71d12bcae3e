import { setTimeout as sleep } from 'node:timers/promises';
import {
  ErrorBodySchema,
  type PackageDetail,
  PackageDetailSchema,
  type SearchResponse,
  SearchResponseSchema,
  type TrackResponse,
  TrackResponseSchema,
} from '@pkgreg/contracts';
import { request } from 'undici';
import type { z } from 'zod';
import { CliError, EXIT } from './errors.js';
import { CLI_VERSION } from './version.js';

export interface RetryPolicy {
  /** Attempts in total, the first included. */
  attempts: number;
  /** First backoff delay; doubles per retry. */
  baseDelayMs: number;
  maxDelayMs: number;
  /** Longest Retry-After the client honours; a longer one is waited for this long. */
  maxRetryAfterMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = {
  attempts: 4,
  baseDelayMs: 250,
  maxDelayMs: 4_000,
  maxRetryAfterMs: 30_000,
};

export interface ClientOptions {
  baseUrl: string;
  timeoutMs: number;
  retry?: RetryPolicy;
  /** Called with one line per request and retry when --verbose is on. */
  debug?: (line: string) => void;
}

export interface RegistryClient {
  readonly baseUrl: string;
  search(query: string): Promise<SearchResponse>;
  detail(scope: string, name: string): Promise<PackageDetail>;
  track(scope: string, name: string): Promise<TrackResponse>;
}

interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

// Errors after which the request never reached the server, so even a non-idempotent POST may be resent.
const NOT_SENT_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'UND_ERR_CONNECT_TIMEOUT']);

function errorCode(error: unknown): string {
  const err = error as { code?: unknown; name?: string; cause?: { code?: unknown } };
  // AbortSignal.timeout() rejects with a DOMException whose numeric `code` (23) says nothing.
  if (err.name === 'TimeoutError') return 'TimeoutError';
  if (typeof err.code === 'string') return err.code;
  if (typeof err.cause?.code === 'string') return err.cause.code;
  return err.name ?? 'unknown';
}

function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/** Retry-After in seconds (RFC 9110 also allows an HTTP date); undefined when absent or unreadable. */
export function retryAfterMs(value: string | undefined, now = Date.now()): number | undefined {
  if (value === undefined) return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  const date = Date.parse(trimmed);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

function backoffMs(policy: RetryPolicy, retry: number): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** retry);
  // Jitter keeps many clients that failed together from retrying together.
  return Math.round(ceiling / 2 + Math.random() * (ceiling / 2));
}

function encodeName(scope: string, name: string): string {
  return `@${encodeURIComponent(scope)}/${encodeURIComponent(name)}`;
}

export function createRegistryClient(options: ClientOptions): RegistryClient {
  const policy = options.retry ?? DEFAULT_RETRY;
  const debug = options.debug ?? (() => {});
  const baseUrl = options.baseUrl.replace(/\/+$/, '');

  async function send(method: 'GET' | 'POST', path: string, idempotent: boolean): Promise<RawResponse> {
    const url = `${baseUrl}${path}`;
    let lastFailure = '';
    for (let attempt = 1; attempt <= policy.attempts; attempt++) {
      const started = Date.now();
      let wait: number;
      try {
        const response = await request(url, {
          method,
          headers: {
            accept: 'application/json',
            'user-agent': `pkgreg/${CLI_VERSION} node/${process.versions.node}`,
          },
          signal: AbortSignal.timeout(options.timeoutMs),
        });
        const text = await response.body.text();
        debug(`${method} ${url} -> ${response.statusCode} (${Date.now() - started} ms)`);
        const raw: RawResponse = { status: response.statusCode, headers: response.headers, text };
        if (response.statusCode === 429) {
          const retryAfter = retryAfterMs(headerValue(response.headers['retry-after']));
          wait = Math.min(policy.maxRetryAfterMs, retryAfter ?? backoffMs(policy, attempt - 1));
          lastFailure = `HTTP 429${errorMessage(text) ? `: ${errorMessage(text)}` : ''}`;
        } else if (response.statusCode >= 500 && idempotent) {
          // A 503 may say when to come back (RFC 9110); otherwise back off exponentially.
          const retryAfter = retryAfterMs(headerValue(response.headers['retry-after']));
          wait = Math.min(policy.maxRetryAfterMs, retryAfter ?? backoffMs(policy, attempt - 1));
          lastFailure = `HTTP ${response.statusCode}${errorMessage(text) ? `: ${errorMessage(text)}` : ''}`;
        } else {
          return raw;
        }
      } catch (error) {
        const code = errorCode(error);
        debug(`${method} ${url} failed: ${code} (${Date.now() - started} ms)`);
        lastFailure = code === 'TimeoutError' ? `timed out after ${options.timeoutMs} ms` : code;
        if (!idempotent && !NOT_SENT_CODES.has(code)) break;
        wait = backoffMs(policy, attempt - 1);
      }
      if (attempt < policy.attempts) {
        debug(`retrying in ${wait} ms (attempt ${attempt + 1} of ${policy.attempts})`);
        await sleep(wait);
      }
    }
    throw new CliError(
      EXIT.unavailable,
      `Registry unavailable at ${baseUrl}: ${lastFailure}`,
      `${method} ${path} failed after retries (up to ${policy.attempts} attempts)`,
    );
  }

  function parseBody<T>(raw: RawResponse, schema: z.ZodType<T>, what: string): T {
    let json: unknown;
    try {
      json = JSON.parse(raw.text);
    } catch {
      throw new CliError(
        EXIT.unavailable,
        `Malformed response from registry (${what}): not JSON`,
        raw.text.slice(0, 500),
      );
    }
    const parsed = schema.safeParse(json);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const where = issue?.path.length ? issue.path.join('.') : 'body';
      throw new CliError(
        EXIT.unavailable,
        `Malformed response from registry (${what}): ${where}: ${issue?.message}`,
        JSON.stringify(parsed.error.issues.slice(0, 5)),
      );
    }
    return parsed.data;
  }

  function failure(raw: RawResponse, what: string): CliError {
    const message = errorMessage(raw.text) ?? `HTTP ${raw.status}`;
    if (raw.status === 404) return new CliError(EXIT.notFound, `${what}: ${message}`);
    if (raw.status >= 500)
      return new CliError(EXIT.unavailable, `Registry unavailable at ${baseUrl}: ${message}`);
    return new CliError(EXIT.error, `${what}: ${message}`, `HTTP ${raw.status}`);
  }

  async function call<T>(
    method: 'GET' | 'POST',
    path: string,
    schema: z.ZodType<T>,
    what: string,
    idempotent: boolean,
  ): Promise<T> {
    const raw = await send(method, path, idempotent);
    if (raw.status !== 200) throw failure(raw, what);
    return parseBody(raw, schema, what);
  }

  return {
    baseUrl,
    search: (query) =>
      call('GET', `/api/search?q=${encodeURIComponent(query)}`, SearchResponseSchema, 'search', true),
    detail: (scope, name) =>
      call('GET', `/api/packages/${encodeName(scope, name)}`, PackageDetailSchema, `@${scope}/${name}`, true),
    // Track counts every accepted call (decisions.md: Registry / Track), so it is resent only when the
    // request provably never arrived, never after a 5xx or a timeout.
    track: (scope, name) =>
      call(
        'POST',
        `/api/packages/${encodeName(scope, name)}/track`,
        TrackResponseSchema,
        `@${scope}/${name}`,
        false,
      ),
  };
}

function errorMessage(text: string): string | undefined {
  try {
    const parsed = ErrorBodySchema.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data.error : undefined;
  } catch {
    return undefined;
  }
}
