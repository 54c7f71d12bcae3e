import {
  type CliTokenRequest,
  type CliTokenResponse,
  CliTokenResponseSchema,
  type CreatedToken,
  CreatedTokenSchema,
  type CreateTokenRequest,
  type DependantsResponse,
  DependantsResponseSchema,
  ErrorBodySchema,
  type ListQuery,
  type ListResponse,
  ListResponseSchema,
  type LogProof,
  LogProofSchema,
  type Me,
  MeSchema,
  type PackageDetail,
  PackageDetailSchema,
  type PackageFilters,
  type PackageSettings,
  PackageSettingsSchema,
  type PackageState,
  PackageStateSchema,
  type PublishAccepted,
  PublishAcceptedSchema,
  type PublishRequest,
  type PublishRun,
  PublishRunSchema,
  type RegistryKeysResponse,
  RegistryKeysResponseSchema,
  type SearchResponse,
  SearchResponseSchema,
  TokenListSchema,
  type TokenSummary,
  TokenSummarySchema,
  type TrackResponse,
  TrackResponseSchema,
  type UploadResult,
  UploadResultSchema,
  type VersionAttestationsResponse,
  VersionAttestationsResponseSchema,
  type VersionDetail,
  VersionDetailSchema,
  type VersionListResponse,
  VersionListResponseSchema,
  type YankState,
  YankStateSchema,
} from '@pkgreg/contracts';
import type { z } from 'zod';
import { RegistryError } from './errors.js';
import { archivePath, filePath, filterParams, packagePath, versionPath } from './paths.js';
import { backoffMs, type RetryPolicy, retryAfterMs } from './retry.js';
import { type Method, type Transport, TransportError, type TransportResponse } from './transport.js';

// The registry's REST API (registry-api.md, docs/versions.md) as every caller reads it: each answer
// parsed by its contract schema before use, each failure one RegistryError with a closed set of codes,
// retries and size bounds decided here, the bytes moved by the caller's transport.

/**
 * The most a JSON answer (or an error's body) may weigh unless told otherwise: a version manifest of
 * the indexer's 2,000 files at most is a few MB. A hostile registry's endless body stops here.
 */
export const JSON_MAX_BYTES = 16 * 1024 * 1024;

export interface RegistryClientOptions {
  /** The registry's address (a path prefix is kept); '' in a browser for the page's own origin. */
  baseUrl: string;
  transport: Transport;
  /** Without one, every answer is taken as it comes: nothing is sent twice. */
  retry?: RetryPolicy;
  /** Bound of a JSON answer or an error body (default JSON_MAX_BYTES). */
  maxJsonBytes?: number;
  /** Sent with every request (a user agent). */
  headers?: Record<string, string>;
  /**
   * The bearer token requests act with, when there is one (per registry: coming with accounts). A proof
   * given to a call (publish, deprecate, yank) is sent instead. Never logged.
   */
  credentials?: () => string | undefined;
  /** The caller's own error for a RegistryError (the CLI's exit codes): every failure passes here. */
  mapError?: (error: RegistryError) => Error;
  /** One line per request, failure and retry (the CLI's --verbose); never a header. */
  log?: (line: string) => void;
  /** Waits between attempts. */
  sleep?: (ms: number) => Promise<void>;
}

export interface CallOptions {
  /** The caller's abort: the request is dropped and its abort error thrown as it is. */
  signal?: AbortSignal;
  /**
   * A bearer this one call is sent with instead of the client's credentials (the MCP edge's delegation
   * assertion for a read it makes as a person). Never logged.
   */
  token?: string;
  /** Sent without the client's credentials: what anyone may read (a public version). */
  anonymous?: boolean;
}

/** How a download reports its bytes: received so far, and the total when the server said it. */
export type DownloadProgress = (received: number, total: number | undefined) => void;

export interface DownloadOptions extends CallOptions {
  /** A larger body is refused (`too_large`) without being read further. */
  maxBytes: number;
  onProgress?: DownloadProgress;
}

/** The start of a file: at most `limit` bytes; the rest is not downloaded. */
export interface FileHead {
  bytes: Uint8Array;
  /** The file goes on past them. */
  truncated: boolean;
  contentType: string;
}

/** A conditional read: the new body and its ETag, or unchanged since the ETag sent (304). */
export type Revalidated<T> = { status: 200; body: T; etag: string | undefined } | { status: 304 };

/** A page of GET /api/packages: an order, optionally filtered. */
export type ListParams = Pick<ListQuery, 'page' | 'pageSize' | 'sort' | 'order'> & PackageFilters;

export interface RegistryClient {
  readonly baseUrl: string;
  search(query: string, filters?: PackageFilters, options?: CallOptions): Promise<SearchResponse>;
  list(query: ListParams, options?: CallOptions): Promise<ListResponse>;
  detail(scope: string, name: string, options?: CallOptions): Promise<PackageDetail>;
  /** The detail unless it is unchanged since `etag` (then 304). */
  revalidateDetail(
    scope: string,
    name: string,
    etag: string | undefined,
    options?: CallOptions,
  ): Promise<Revalidated<PackageDetail>>;
  /** Counts one download (decisions.md: Registry / Track): sent again only when it provably never arrived. */
  track(scope: string, name: string, options?: CallOptions): Promise<TrackResponse>;
  /** One page of a package's versions, newest first. */
  versions(
    scope: string,
    name: string,
    page: number,
    pageSize: number,
    options?: CallOptions,
  ): Promise<VersionListResponse>;
  /** A version's manifest; `version` is exact or `latest`. */
  version(scope: string, name: string, version: string, options?: CallOptions): Promise<VersionDetail>;
  /** GET /api/keys: every key the registry signed versions with (docs/provenance.md). */
  keys(options?: CallOptions): Promise<RegistryKeysResponse>;
  /** A version's provenance attestations (DSSE envelopes of in-toto statements; docs/provenance.md). */
  attestations(
    scope: string,
    name: string,
    version: string,
    options?: CallOptions,
  ): Promise<VersionAttestationsResponse>;
  /** GET /api/log/checkpoint: the transparency log's latest checkpoint, a signed note (404: no log yet). */
  checkpoint(options?: CallOptions): Promise<string>;
  /** The audit path of leaf `index` in the log's tree of `size` leaves (RFC 9162 §2.1.3). */
  inclusionProof(index: number, size: number, options?: CallOptions): Promise<LogProof>;
  /** The proof that the log's tree of `to` leaves extends the one of `from` (RFC 9162 §2.1.4). */
  consistencyProof(from: number, to: number, options?: CallOptions): Promise<LogProof>;
  /** A page of the packages whose latest version depends on this one. */
  dependants(
    scope: string,
    name: string,
    page: number,
    pageSize: number,
    options?: CallOptions,
  ): Promise<DependantsResponse>;
  /** The bytes of a file of a version (unbounded unless `maxBytes` says). */
  file(
    scope: string,
    name: string,
    version: string,
    path: string,
    options?: Partial<DownloadOptions>,
  ): Promise<Uint8Array>;
  fileHead(
    scope: string,
    name: string,
    version: string,
    path: string,
    limit: number,
    options?: CallOptions,
  ): Promise<FileHead>;
  /** The bytes of a version's archive.tgz. */
  archive(scope: string, name: string, version: string, options: DownloadOptions): Promise<Uint8Array>;
  /** POST /api/publish with a proof (`token`: an OIDC or code-host token); answered 202. */
  publish(token: string, request: PublishRequest): Promise<PublishAccepted>;
  publishRun(runId: string): Promise<PublishRun>;
  /** A package's visibility and trusted publishers (admins of its scope), with an access token. */
  packageSettings(token: string, scope: string, name: string): Promise<PackageSettings>;
  /** Trusts a CI identity to upload versions (POST …/trusted-publishers); the settings after it. */
  addTrustedPublisher(
    token: string,
    scope: string,
    name: string,
    publisher: {
      issuer: string;
      repository: string;
      workflow?: string;
      environment?: string;
      wholeScope?: boolean;
    },
  ): Promise<PackageSettings>;
  removeTrustedPublisher(token: string, scope: string, name: string, id: string): Promise<PackageSettings>;
  /**
   * PUT of a version of a hosted package: `tgz` a skill folder's archive, `token` a publish token or a
   * CI OIDC token of a trusted publisher; answered 201. Not sent again once it may have arrived (an
   * OIDC token is accepted once). `sourcePath`: the skill's folder in the CI job's repository.
   */
  uploadVersion(
    token: string,
    scope: string,
    name: string,
    version: string,
    tgz: Uint8Array,
    options?: { sourcePath?: string },
  ): Promise<UploadResult>;
  /** PUT (message set) or DELETE (null) of a package's deprecation, with a proof (undefined: the client's credentials). */
  setDeprecation(
    token: string | undefined,
    scope: string,
    name: string,
    deprecate: { message?: string } | null,
  ): Promise<PackageState>;
  /** PUT (yank) or DELETE (null) of a version's yank, with a proof (undefined: the client's credentials). */
  setYank(
    token: string | undefined,
    scope: string,
    name: string,
    version: string,
    yank: { reason?: string } | null,
  ): Promise<YankState>;
  // Accounts (docs/cli-auth.md). `token` is a session bearer (the device flow's) sent instead of the
  // client's credentials.
  /** GET /api/me: whose the credentials are. */
  me(): Promise<Me>;
  listTokens(): Promise<TokenSummary[]>;
  createToken(request: CreateTokenRequest, token?: string): Promise<CreatedToken>;
  revokeToken(id: string): Promise<TokenSummary>;
  /** DELETE /api/tokens/current: the credentials revoke themselves. */
  revokeCurrentToken(): Promise<TokenSummary>;
  /** POST /api/cli/token: a browser sign-in's code for a token; sent without credentials. */
  cliToken(request: CliTokenRequest): Promise<CliTokenResponse>;
}

/** One request as the client makes it. */
interface Call extends CallOptions {
  method: Method;
  path: string;
  subject: string;
  /** Sending it twice leaves what sending it once does (GET, PUT, DELETE; not track or publish). */
  idempotent: boolean;
  accept?: string;
  body?: unknown;
  /** Bytes sent as they are (an upload), instead of a JSON `body`. */
  raw?: { bytes: Uint8Array; contentType: string };
  /** A proof sent instead of the client's credentials. */
  token?: string;
  /** Sent without credentials at all. */
  anonymous?: boolean;
  headers?: Record<string, string>;
  /** The bound of a 200's body and its progress; a download is timed by its silences only. */
  download?: { maxBytes: number; onProgress?: DownloadProgress };
  /** A 200's body may be cut at the bound (a file's head) instead of refused. */
  cut?: boolean;
  keepalive?: boolean;
}

/** An answer read whole (or up to its bound). */
interface Answer {
  status: number;
  statusText: string;
  header(name: string): string | undefined;
  bytes: Uint8Array;
  truncated: boolean;
}

const decoder = new TextDecoder();

function declaredLength(response: TransportResponse): number | undefined {
  const value = response.header('content-length');
  const length = value === undefined ? Number.NaN : Number(value);
  return Number.isFinite(length) && length >= 0 ? length : undefined;
}

/** The `error` of the registry's error body, or undefined when the body is something else. */
function errorText(bytes: Uint8Array): string | undefined {
  try {
    const parsed = ErrorBodySchema.safeParse(JSON.parse(decoder.decode(bytes)));
    return parsed.success ? parsed.data.error : undefined;
  } catch {
    return undefined;
  }
}

const defaultSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export function createRegistryClient(options: RegistryClientOptions): RegistryClient {
  const baseUrl = options.baseUrl.replace(/\/+$/, '');
  const { transport, retry: policy } = options;
  const maxJsonBytes = options.maxJsonBytes ?? JSON_MAX_BYTES;
  const { log } = options;
  const sleep = options.sleep ?? defaultSleep;
  const attempts = policy?.attempts ?? 1;

  const fail = (call: Call, fields: Partial<RegistryError> & Pick<RegistryError, 'code'>): Error => {
    const error = new RegistryError({
      subject: call.subject,
      request: `${call.method} ${call.path}`,
      baseUrl,
      attempts,
      ...fields,
    });
    return options.mapError?.(error) ?? error;
  };

  /**
   * Reads a body up to its bound: a 200's download bound, or maxJsonBytes for everything else. A bigger
   * body is never held whole: a declared length past the bound stops before reading, a stream at the
   * first chunk past it.
   */
  async function readBody(call: Call, response: TransportResponse): Promise<Answer> {
    const download = response.status === 200 ? call.download : undefined;
    const maxBytes = download?.maxBytes ?? maxJsonBytes;
    const cut = response.status === 200 && call.cut === true;
    const tooLarge = (received: string) =>
      fail(call, { code: 'too_large', received, maxBytes, download: download !== undefined });
    const answer = (bytes: Uint8Array, truncated: boolean): Answer => ({
      status: response.status,
      statusText: response.statusText,
      header: (name) => response.header(name),
      bytes,
      truncated,
    });
    // No body to read (RFC 9110): a revalidation answered 304 costs no read.
    if (response.status === 304 || response.status === 204) {
      response.discard();
      return answer(new Uint8Array(0), false);
    }
    const total = declaredLength(response);
    if (!cut && total !== undefined && total > maxBytes) {
      response.discard();
      throw tooLarge(String(total));
    }
    const progress = download?.onProgress;
    const read = await response.read(maxBytes, progress && ((received) => progress(received, total)));
    if (read.truncated && !cut) throw tooLarge(`more than ${maxBytes}`);
    return answer(read.bytes, read.truncated);
  }

  /** Sends a call, again after a 429, a 5xx (idempotent only) or no answer, as the policy allows. */
  async function send(call: Call): Promise<Answer> {
    const url = `${baseUrl}${call.path}`;
    const headers: Record<string, string> = { ...options.headers, ...call.headers };
    if (call.accept) headers.accept = call.accept;
    let body: string | Uint8Array | undefined;
    if (call.raw) {
      body = call.raw.bytes;
      headers['content-type'] = call.raw.contentType;
    } else if (call.body !== undefined) {
      body = JSON.stringify(call.body);
      headers['content-type'] = 'application/json';
    }
    // Credentials go on here and nowhere else.
    const token = call.anonymous ? undefined : (call.token ?? options.credentials?.());
    if (token) headers.authorization = `Bearer ${token}`;
    let lastFailure = '';
    for (let attempt = 1; attempt <= attempts; attempt++) {
      const started = Date.now();
      let wait: number;
      try {
        const response = await transport({
          method: call.method,
          url,
          headers,
          body,
          download: call.download !== undefined,
          keepalive: call.keepalive === true,
          signal: call.signal,
        });
        const answer = await readBody(call, response);
        log?.(`${call.method} ${url} -> ${answer.status} (${Date.now() - started} ms)`);
        const retryable = answer.status === 429 || (answer.status >= 500 && call.idempotent);
        if (!policy || !retryable) return answer;
        // A 429, and a 503, may say when to come back (RFC 9110); otherwise back off exponentially.
        const after = retryAfterMs(answer.header('retry-after'));
        wait = Math.min(policy.maxRetryAfterMs, after ?? backoffMs(policy, attempt - 1));
        const message = errorText(answer.bytes);
        lastFailure = `HTTP ${answer.status}${message ? `: ${message}` : ''}`;
      } catch (error) {
        if (!(error instanceof TransportError)) throw error;
        log?.(`${call.method} ${url} failed: ${error.code} (${Date.now() - started} ms)`);
        lastFailure = error.reason;
        // Not sent again once it may have arrived, unless sending it twice changes nothing.
        if (!policy || (!call.idempotent && !error.notSent)) break;
        wait = backoffMs(policy, attempt - 1);
      }
      if (attempt < attempts) {
        log?.(`retrying in ${wait} ms (attempt ${attempt + 1} of ${attempts})`);
        await sleep(wait);
      }
    }
    throw fail(call, { code: 'unavailable', failure: lastFailure });
  }

  /** Refuses an answer other than `expect`: the registry's status and message. */
  function refuse(call: Call, answer: Answer): Error {
    return fail(call, {
      code: 'status',
      status: answer.status,
      statusText: answer.statusText,
      error: errorText(answer.bytes),
      credentialsSent: !call.anonymous && call.token === undefined && options.credentials?.() !== undefined,
    });
  }

  function parse<T>(call: Call, answer: Answer, schema: z.ZodType<T>): T {
    const text = decoder.decode(answer.bytes);
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      throw fail(call, { code: 'malformed', text: text.slice(0, 500) });
    }
    const parsed = schema.safeParse(json);
    if (!parsed.success) throw fail(call, { code: 'malformed', issues: parsed.error.issues.slice(0, 5) });
    return parsed.data;
  }

  async function json<T>(call: Call, schema: z.ZodType<T>, expect = 200): Promise<T> {
    const answer = await send({ accept: 'application/json', ...call });
    if (answer.status !== expect) throw refuse(call, answer);
    return parse(call, answer, schema);
  }

  async function bytes(call: Call): Promise<Answer> {
    const answer = await send(call);
    if (answer.status !== 200) throw refuse(call, answer);
    return answer;
  }

  const named = (scope: string, name: string) => `@${scope}/${name}`;

  return {
    baseUrl,
    search: (query, filters = {}, opts = {}) =>
      json(
        {
          method: 'GET',
          path: `/api/search?${new URLSearchParams([['q', query], ...filterParams(filters)])}`,
          subject: 'search',
          idempotent: true,
          ...opts,
        },
        SearchResponseSchema,
      ),
    list: (query, opts = {}) => {
      const params = new URLSearchParams({
        page: String(query.page),
        pageSize: String(query.pageSize),
        sort: query.sort,
        order: query.order,
      });
      for (const [name, value] of filterParams(query)) params.set(name, value);
      return json(
        { method: 'GET', path: `/api/packages?${params}`, subject: 'list', idempotent: true, ...opts },
        ListResponseSchema,
      );
    },
    detail: (scope, name, opts = {}) =>
      json(
        {
          method: 'GET',
          path: packagePath(scope, name),
          subject: named(scope, name),
          idempotent: true,
          ...opts,
        },
        PackageDetailSchema,
      ),
    async revalidateDetail(scope, name, etag, opts = {}) {
      const call: Call = {
        method: 'GET',
        path: packagePath(scope, name),
        subject: named(scope, name),
        idempotent: true,
        accept: 'application/json',
        headers: etag ? { 'if-none-match': etag } : {},
        ...opts,
      };
      const answer = await send(call);
      if (answer.status === 304 && etag) return { status: 304 };
      if (answer.status !== 200) throw refuse(call, answer);
      return { status: 200, body: parse(call, answer, PackageDetailSchema), etag: answer.header('etag') };
    },
    track: (scope, name, opts = {}) =>
      json(
        {
          method: 'POST',
          path: `${packagePath(scope, name)}/track`,
          subject: named(scope, name),
          // Each accepted call counts: never resent after it may have arrived (a 5xx, a timeout).
          idempotent: false,
          keepalive: true,
          ...opts,
        },
        TrackResponseSchema,
      ),
    versions: (scope, name, page, pageSize, opts = {}) =>
      json(
        {
          method: 'GET',
          path: `${packagePath(scope, name)}/versions?page=${page}&pageSize=${pageSize}`,
          subject: named(scope, name),
          idempotent: true,
          ...opts,
        },
        VersionListResponseSchema,
      ),
    version: (scope, name, version, opts = {}) =>
      json(
        {
          method: 'GET',
          path: versionPath(scope, name, version),
          subject: `${named(scope, name)}@${version}`,
          idempotent: true,
          ...opts,
        },
        VersionDetailSchema,
      ),
    attestations: (scope, name, version, opts = {}) =>
      json(
        {
          method: 'GET',
          path: `${versionPath(scope, name, version)}/attestations`,
          subject: `${named(scope, name)}@${version} attestations`,
          idempotent: true,
          ...opts,
        },
        VersionAttestationsResponseSchema,
      ),
    keys: (opts = {}) =>
      json(
        { method: 'GET', path: '/api/keys', subject: 'signing keys', idempotent: true, ...opts },
        RegistryKeysResponseSchema,
      ),
    async checkpoint(opts = {}) {
      const call: Call = {
        method: 'GET',
        path: '/api/log/checkpoint',
        subject: 'transparency log checkpoint',
        idempotent: true,
        accept: 'text/plain',
        ...opts,
      };
      return decoder.decode((await bytes(call)).bytes);
    },
    inclusionProof: (index, size, opts = {}) =>
      json(
        {
          method: 'GET',
          path: `/api/log/proof/inclusion?${new URLSearchParams({ index: String(index), size: String(size) })}`,
          subject: 'transparency log inclusion proof',
          idempotent: true,
          ...opts,
        },
        LogProofSchema,
      ),
    consistencyProof: (from, to, opts = {}) =>
      json(
        {
          method: 'GET',
          path: `/api/log/proof/consistency?${new URLSearchParams({ from: String(from), to: String(to) })}`,
          subject: 'transparency log consistency proof',
          idempotent: true,
          ...opts,
        },
        LogProofSchema,
      ),
    dependants: (scope, name, page, pageSize, opts = {}) =>
      json(
        {
          method: 'GET',
          path: `${packagePath(scope, name)}/dependants?${new URLSearchParams({ page: String(page), pageSize: String(pageSize) })}`,
          subject: named(scope, name),
          idempotent: true,
          ...opts,
        },
        DependantsResponseSchema,
      ),
    async file(scope, name, version, path, opts = {}) {
      const { maxBytes = Number.POSITIVE_INFINITY, onProgress, signal, token } = opts;
      const answer = await bytes({
        method: 'GET',
        path: filePath(scope, name, version, path),
        subject: `${named(scope, name)}@${version}`,
        idempotent: true,
        download: { maxBytes, onProgress },
        signal,
        token,
      });
      return answer.bytes;
    },
    async fileHead(scope, name, version, path, limit, opts = {}) {
      const answer = await bytes({
        method: 'GET',
        path: filePath(scope, name, version, path),
        subject: `${named(scope, name)}@${version}`,
        idempotent: true,
        download: { maxBytes: limit },
        cut: true,
        ...opts,
      });
      return {
        bytes: answer.bytes,
        truncated: answer.truncated,
        contentType: answer.header('content-type') ?? '',
      };
    },
    async archive(scope, name, version, { maxBytes, onProgress, signal, token }) {
      const answer = await bytes({
        method: 'GET',
        path: archivePath(scope, name, version),
        subject: `${named(scope, name)}@${version}`,
        idempotent: true,
        accept: 'application/gzip',
        download: { maxBytes, onProgress },
        signal,
        token,
      });
      return answer.bytes;
    },
    publish: (token, request) =>
      json(
        {
          method: 'POST',
          path: '/api/publish',
          subject: `publish ${request.repository}`,
          // A second publish would be a second run.
          idempotent: false,
          body: request,
          token,
        },
        PublishAcceptedSchema,
        202,
      ),
    uploadVersion: (token, scope, name, version, tgz, options) =>
      json(
        {
          method: 'PUT',
          path: `${versionPath(scope, name, version)}${options?.sourcePath ? `?sourcePath=${encodeURIComponent(options.sourcePath)}` : ''}`,
          subject: `upload ${named(scope, name)}@${version}`,
          idempotent: false,
          raw: { bytes: tgz, contentType: 'application/gzip' },
          token,
        },
        UploadResultSchema,
        201,
      ),
    packageSettings: (token, scope, name) =>
      json(
        {
          method: 'GET',
          path: `${packagePath(scope, name)}/settings`,
          subject: named(scope, name),
          idempotent: true,
          token,
        },
        PackageSettingsSchema,
      ),
    addTrustedPublisher: (token, scope, name, publisher) =>
      json(
        {
          method: 'POST',
          path: `${packagePath(scope, name)}/trusted-publishers`,
          subject: named(scope, name),
          // Sent twice it would trust the same identity twice.
          idempotent: false,
          body: publisher,
          token,
        },
        PackageSettingsSchema,
        201,
      ),
    removeTrustedPublisher: (token, scope, name, id) =>
      json(
        {
          method: 'DELETE',
          path: `${packagePath(scope, name)}/trusted-publishers/${encodeURIComponent(id)}`,
          subject: named(scope, name),
          idempotent: true,
          token,
        },
        PackageSettingsSchema,
      ),
    publishRun: (runId) =>
      json(
        {
          method: 'GET',
          path: `/api/publish/${encodeURIComponent(runId)}`,
          subject: `run ${runId}`,
          idempotent: true,
        },
        PublishRunSchema,
      ),
    // PUT and DELETE set a state: sending one twice leaves what sending it once does.
    setDeprecation: (token, scope, name, deprecate) =>
      json(
        {
          method: deprecate ? 'PUT' : 'DELETE',
          path: `${packagePath(scope, name)}/deprecation`,
          subject: named(scope, name),
          idempotent: true,
          ...(token ? { token } : {}),
          ...(deprecate ? { body: deprecate } : {}),
        },
        PackageStateSchema,
      ),
    setYank: (token, scope, name, version, yank) =>
      json(
        {
          method: yank ? 'PUT' : 'DELETE',
          path: `${versionPath(scope, name, version)}/yank`,
          subject: `${named(scope, name)}@${version}`,
          idempotent: true,
          ...(token ? { token } : {}),
          ...(yank ? { body: yank } : {}),
        },
        YankStateSchema,
      ),
    me: () => json({ method: 'GET', path: '/api/me', subject: 'whoami', idempotent: true }, MeSchema),
    listTokens: async () =>
      (
        await json(
          { method: 'GET', path: '/api/tokens', subject: 'tokens', idempotent: true },
          TokenListSchema,
        )
      ).data,
    createToken: (request, token) =>
      json(
        {
          method: 'POST',
          path: '/api/tokens',
          subject: 'token create',
          idempotent: false,
          body: request,
          ...(token ? { token } : {}),
        },
        CreatedTokenSchema,
        201,
      ),
    revokeToken: (id) =>
      json(
        {
          method: 'DELETE',
          path: `/api/tokens/${encodeURIComponent(id)}`,
          subject: `token ${id}`,
          // Sent twice, the second would be a 404 (or a 401, for the current token).
          idempotent: false,
        },
        TokenSummarySchema,
      ),
    revokeCurrentToken: () =>
      json(
        { method: 'DELETE', path: '/api/tokens/current', subject: 'logout', idempotent: false },
        TokenSummarySchema,
      ),
    cliToken: (request) =>
      json(
        {
          method: 'POST',
          path: '/api/cli/token',
          subject: 'login',
          // The code is taken at the first try: a second one could only fail.
          idempotent: false,
          body: request,
          anonymous: true,
        },
        CliTokenResponseSchema,
        201,
      ),
  };
}
