import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  ErrorBodySchema,
  FILTER_NAMES,
  type ListQuery,
  type ListResponse,
  ListResponseSchema,
  type PackageDetail,
  PackageDetailSchema,
  type PackageFilters,
  type PackageState,
  PackageStateSchema,
  type PublishAccepted,
  PublishAcceptedSchema,
  type PublishRequest,
  type PublishRun,
  PublishRunSchema,
  type SearchResponse,
  SearchResponseSchema,
  type TrackResponse,
  TrackResponseSchema,
  type VersionDetail,
  VersionDetailSchema,
  type VersionListResponse,
  VersionListResponseSchema,
  type YankState,
  YankStateSchema,
} from '@pkgreg/contracts';
import type { z } from 'zod';
import { CliError, EXIT } from './errors.js';
import { CLI_VERSION } from './version.js';

/** The filters as query parameters, with the API's names (FILTER_NAMES' order). */
function filterParams(filters: PackageFilters): Array<[string, string]> {
  return FILTER_NAMES.flatMap((name) => {
    const value = filters[name];
    return value === undefined ? [] : [[name, String(value)] as [string, string]];
  });
}

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

/** How a download reports its bytes: received so far, and the total when the server said it. */
export type DownloadProgress = (received: number, total: number | undefined) => void;

export interface DownloadOptions {
  /** A larger body is refused (exit 5) without reading further. */
  maxBytes: number;
  onProgress?: DownloadProgress;
}

export interface RegistryClient {
  readonly baseUrl: string;
  search(query: string, filters?: PackageFilters): Promise<SearchResponse>;
  /** A page of GET /api/packages: an order, optionally filtered. */
  list(query: ListQuery): Promise<ListResponse>;
  detail(scope: string, name: string): Promise<PackageDetail>;
  track(scope: string, name: string): Promise<TrackResponse>;
  /** One page of a package's versions, newest first. */
  versions(scope: string, name: string, page: number, pageSize: number): Promise<VersionListResponse>;
  /** A version's manifest; `version` is exact or `latest`. */
  version(scope: string, name: string, version: string): Promise<VersionDetail>;
  /** The bytes of a version's archive.tgz. */
  archive(scope: string, name: string, version: string, options: DownloadOptions): Promise<Buffer>;
  /** POST /api/publish with a proof (`token`, an OIDC or code-host token); answered 202. */
  publish(token: string, request: PublishRequest): Promise<PublishAccepted>;
  /** GET /api/publish/{runId}. */
  publishRun(runId: string): Promise<PublishRun>;
  /** PUT (message set) or DELETE (null) of a package's deprecation, with a proof. */
  setDeprecation(
    token: string,
    scope: string,
    name: string,
    deprecate: { message?: string } | null,
  ): Promise<PackageState>;
  /** PUT (yank) or DELETE (null) of a version's yank, with a proof. */
  setYank(
    token: string,
    scope: string,
    name: string,
    version: string,
    yank: { reason?: string } | null,
  ): Promise<YankState>;
}

type Method = 'GET' | 'POST' | 'PUT' | 'DELETE';

interface RawResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
  text: string;
}

interface SendOptions {
  idempotent: boolean;
  accept?: string;
  download?: DownloadOptions;
  /** A JSON body. */
  body?: unknown;
  /** Sent as `Authorization: Bearer`; never printed, not even with --verbose. */
  token?: string;
}

/**
 * The most a response other than an archive may weigh (JSON, or an error's body): a version manifest
 * of the indexer's 2,000 files at most is a few MB. A hostile registry's endless body stops here.
 */
export const JSON_MAX_BYTES = 16 * 1024 * 1024;

/** A connection not made (and, for https, secured) within this long fails with CONNECT_TIMEOUT. */
const CONNECT_TIMEOUT_MS = 10_000;
// The code undici gave this failure; kept so the message stays what it was.
const CONNECT_TIMEOUT = 'UND_ERR_CONNECT_TIMEOUT';

// Errors after which the request never reached the server, so even a non-idempotent POST may be resent.
const NOT_SENT_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', CONNECT_TIMEOUT]);

function errorCode(error: unknown): string {
  const err = error as { code?: unknown; name?: string; cause?: { code?: unknown } };
  if (err.name === 'TimeoutError') return 'TimeoutError';
  if (typeof err.code === 'string') return err.code;
  if (typeof err.cause?.code === 'string') return err.cause.code;
  return err.name ?? 'unknown';
}

function failureWithCode(code: string, message: string): Error {
  return Object.assign(new Error(message), { code });
}

function timeoutError(ms: number): Error {
  const error = new Error(`timed out after ${ms} ms`);
  error.name = 'TimeoutError';
  return error;
}

/** A response whose body is still to be read, and the timers that bound it. */
interface Exchange {
  response: IncomingMessage;
  /** Restarts the timeout when it counts silence (a download): called per chunk received. */
  touch(): void;
  /** Stops the timers; called once the body is read or given up. */
  finish(): void;
}

/**
 * Sends a request with Node's own http/https (no redirect followed, no body decoded). The timeout bounds
 * the whole exchange, body included, or with `idle` only the silences: until the headers, then between
 * chunks. A failure destroys the request and the response with an error whose `name` or `code` says why.
 */
function exchange(
  method: Method,
  url: string,
  headers: Record<string, string>,
  timeoutMs: number,
  idle: boolean,
  body?: Buffer,
): Promise<Exchange> {
  // Loaded here: https brings TLS, which a plain-http registry never needs.
  const { request } = url.startsWith('https:')
    ? process.getBuiltinModule('node:https')
    : process.getBuiltinModule('node:http');
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers });
    let response: IncomingMessage | undefined;
    const fail = (error: Error) => {
      req.destroy(error);
      response?.destroy(error);
    };
    let timer = setTimeout(() => fail(timeoutError(timeoutMs)), timeoutMs);
    const connectTimer = setTimeout(
      () => fail(failureWithCode(CONNECT_TIMEOUT, `no connection within ${CONNECT_TIMEOUT_MS} ms`)),
      CONNECT_TIMEOUT_MS,
    );
    const finish = () => {
      clearTimeout(timer);
      clearTimeout(connectTimer);
    };
    const touch = () => {
      clearTimeout(timer);
      timer = setTimeout(() => fail(timeoutError(timeoutMs)), timeoutMs);
    };
    req.on('socket', (socket) => {
      if (!socket.connecting) clearTimeout(connectTimer);
      else socket.once('encrypted' in socket ? 'secureConnect' : 'connect', () => clearTimeout(connectTimer));
    });
    req.on('error', (error) => {
      finish();
      reject(error);
    });
    req.on('response', (res) => {
      response = res;
      clearTimeout(connectTimer);
      if (idle) touch();
      resolve({ response: res, touch: idle ? touch : () => {}, finish });
    });
    req.end(body);
  });
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

export function createRegistryClient(clientOptions: ClientOptions): RegistryClient {
  const policy = clientOptions.retry ?? DEFAULT_RETRY;
  const debug = clientOptions.debug ?? (() => {});
  const baseUrl = clientOptions.baseUrl.replace(/\/+$/, '');

  /**
   * Reads a body up to a bound: an archive's (exit 5, archiveBound), or JSON_MAX_BYTES for everything
   * else (exit 4, a malformed response). A bigger body is never held whole: a declared length over the
   * bound stops before reading, a stream stops at the first chunk past it.
   */
  async function readBody(
    { response: body, touch }: Exchange,
    download: DownloadOptions | undefined,
    what: string,
  ): Promise<Buffer> {
    const maxBytes = download?.maxBytes ?? JSON_MAX_BYTES;
    const tooBig = (amount: string) =>
      download
        ? new CliError(
            EXIT.integrity,
            `The registry sent ${amount} bytes where at most ${maxBytes} were expected`,
          )
        : new CliError(
            EXIT.unavailable,
            `Malformed response from registry (${what}): ${amount} bytes, more than the ${maxBytes} a response may have`,
          );
    const declared = Number(headerValue(body.headers['content-length']));
    const total = Number.isFinite(declared) && declared >= 0 ? declared : undefined;
    if (total !== undefined && total > maxBytes) {
      body.destroy();
      throw tooBig(String(total));
    }
    const chunks: Buffer[] = [];
    let received = 0;
    for await (const chunk of body as AsyncIterable<Buffer>) {
      touch();
      received += chunk.length;
      if (received > maxBytes) {
        body.destroy();
        throw tooBig(`more than ${maxBytes}`);
      }
      chunks.push(chunk);
      download?.onProgress?.(received, total);
    }
    return Buffer.concat(chunks);
  }

  async function send(method: Method, path: string, options: SendOptions): Promise<RawResponse> {
    const { idempotent, download } = options;
    const url = `${baseUrl}${path}`;
    let lastFailure = '';
    for (let attempt = 1; attempt <= policy.attempts; attempt++) {
      const started = Date.now();
      let wait: number;
      try {
        const headers: Record<string, string> = {
          accept: options.accept ?? 'application/json',
          'user-agent': `pkgreg/${CLI_VERSION} node/${process.versions.node}`,
        };
        const payload = options.body === undefined ? undefined : Buffer.from(JSON.stringify(options.body));
        if (payload) headers['content-type'] = 'application/json';
        if (method !== 'GET') headers['content-length'] = String(payload?.length ?? 0);
        if (options.token) headers.authorization = `Bearer ${options.token}`;
        // A download may take longer than the timeout as a whole: only silence counts there.
        const pending = await exchange(
          method,
          url,
          headers,
          clientOptions.timeoutMs,
          download !== undefined,
          payload,
        );
        const response = pending.response;
        const status = response.statusCode ?? 0;
        const ok = status === 200;
        let body: Buffer;
        try {
          body = await readBody(pending, ok ? download : undefined, `${method} ${path}`);
        } finally {
          pending.finish();
        }
        debug(`${method} ${url} -> ${status} (${Date.now() - started} ms)`);
        const raw: RawResponse = {
          status,
          headers: response.headers,
          body,
          text: ok && download ? '' : body.toString('utf8'),
        };
        if (status === 429) {
          const retryAfter = retryAfterMs(headerValue(response.headers['retry-after']));
          wait = Math.min(policy.maxRetryAfterMs, retryAfter ?? backoffMs(policy, attempt - 1));
          lastFailure = `HTTP 429${errorMessage(raw.text) ? `: ${errorMessage(raw.text)}` : ''}`;
        } else if (status >= 500 && idempotent) {
          // A 503 may say when to come back (RFC 9110); otherwise back off exponentially.
          const retryAfter = retryAfterMs(headerValue(response.headers['retry-after']));
          wait = Math.min(policy.maxRetryAfterMs, retryAfter ?? backoffMs(policy, attempt - 1));
          lastFailure = `HTTP ${status}${errorMessage(raw.text) ? `: ${errorMessage(raw.text)}` : ''}`;
        } else {
          return raw;
        }
      } catch (error) {
        if (error instanceof CliError) throw error;
        const code = errorCode(error);
        debug(`${method} ${url} failed: ${code} (${Date.now() - started} ms)`);
        lastFailure = code === 'TimeoutError' ? `timed out after ${clientOptions.timeoutMs} ms` : code;
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
    // 410: an operator removed the package (docs/versions.md); its reason is the message.
    if (raw.status === 404 || raw.status === 410) return new CliError(EXIT.notFound, `${what}: ${message}`);
    if (raw.status >= 500)
      return new CliError(EXIT.unavailable, `Registry unavailable at ${baseUrl}: ${message}`);
    return new CliError(EXIT.error, `${what}: ${message}`, `HTTP ${raw.status}`);
  }

  async function call<T>(
    method: Method,
    path: string,
    schema: z.ZodType<T>,
    what: string,
    idempotent: boolean,
    extra: { body?: unknown; token?: string; expect?: number } = {},
  ): Promise<T> {
    const raw = await send(method, path, { idempotent, body: extra.body, token: extra.token });
    if (raw.status !== (extra.expect ?? 200)) throw failure(raw, what);
    return parseBody(raw, schema, what);
  }

  const versionPath = (scope: string, name: string, version: string) =>
    `/api/packages/${encodeName(scope, name)}/versions/${encodeURIComponent(version)}`;

  return {
    baseUrl,
    search: (query, filters = {}) =>
      call(
        'GET',
        `/api/search?${new URLSearchParams([['q', query], ...filterParams(filters)])}`,
        SearchResponseSchema,
        'search',
        true,
      ),
    list: (query) => {
      const params = new URLSearchParams({
        page: String(query.page),
        pageSize: String(query.pageSize),
        sort: query.sort,
        order: query.order,
      });
      for (const [name, value] of filterParams(query)) params.set(name, value);
      return call('GET', `/api/packages?${params}`, ListResponseSchema, 'list', true);
    },
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
    versions: (scope, name, page, pageSize) =>
      call(
        'GET',
        `/api/packages/${encodeName(scope, name)}/versions?page=${page}&pageSize=${pageSize}`,
        VersionListResponseSchema,
        `@${scope}/${name}`,
        true,
      ),
    version: (scope, name, version) =>
      call(
        'GET',
        versionPath(scope, name, version),
        VersionDetailSchema,
        `@${scope}/${name}@${version}`,
        true,
      ),
    archive: async (scope, name, version, download) => {
      const what = `@${scope}/${name}@${version}`;
      const raw = await send('GET', `${versionPath(scope, name, version)}/archive.tgz`, {
        idempotent: true,
        accept: 'application/gzip',
        download,
      });
      if (raw.status !== 200) throw failure(raw, what);
      return raw.body;
    },
    // Not resent after it may have arrived: a second publish would be a second run.
    publish: (token, request) =>
      call('POST', '/api/publish', PublishAcceptedSchema, `publish ${request.repository}`, false, {
        body: request,
        token,
        expect: 202,
      }),
    publishRun: (runId) =>
      call('GET', `/api/publish/${encodeURIComponent(runId)}`, PublishRunSchema, `run ${runId}`, true),
    // PUT and DELETE set a state: sending one twice leaves what sending it once does.
    setDeprecation: (token, scope, name, deprecate) =>
      call(
        deprecate ? 'PUT' : 'DELETE',
        `/api/packages/${encodeName(scope, name)}/deprecation`,
        PackageStateSchema,
        `@${scope}/${name}`,
        true,
        { token, ...(deprecate ? { body: deprecate } : {}) },
      ),
    setYank: (token, scope, name, version, yank) =>
      call(
        yank ? 'PUT' : 'DELETE',
        `${versionPath(scope, name, version)}/yank`,
        YankStateSchema,
        `@${scope}/${name}@${version}`,
        true,
        { token, ...(yank ? { body: yank } : {}) },
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
