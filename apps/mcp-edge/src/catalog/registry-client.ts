import {
  type ListResponse,
  type PackageDetail,
  RejectError,
  type SearchResponse,
  type VersionDetail,
} from '@pkgreg/contracts';
import {
  createRegistryClient as createClient,
  RegistryError,
  readChunks,
  type Transport,
  TransportError,
} from '@pkgreg/registry-client';
import { type Logger, withTraceHeaders } from '@pkgreg/server-kit';
import { Pool } from 'undici';

// The registry's REST API (registry-api.md, docs/versions.md) as the edge reads it, through
// @pkgreg/registry-client: the registry stays the one authority on what is visible, and every answer is
// parsed by its contract schema before use. A registry that cannot be reached, times out, answers 5xx
// or outside its contract is `registry_unavailable` (503, retryable).

/** What a read of one package, version or file can come back as. */
export type RegistryAnswer<T> =
  | { status: 200; body: T; etag: string | undefined }
  /** Not found (a delisted package is not found too), or removed by an operator (410), with its message. */
  | { status: 404 | 410; error: string };

/** Detail is asked conditionally: unchanged since the ETag sent. */
export type DetailAnswer = RegistryAnswer<PackageDetail> | { status: 304 };

/**
 * Each read is anonymous unless given `assertion`: the edge's delegation assertion for a person an app
 * acts for (delegation-assertions.ts), sent as that call's bearer; the registry then answers as it
 * would that person. A registry refusing the assertion (401) is `token_invalid`.
 */
export interface RegistryClient {
  detail(scope: string, name: string, etag?: string, assertion?: string): Promise<DetailAnswer>;
  version(
    scope: string,
    name: string,
    version: string,
    assertion?: string,
  ): Promise<RegistryAnswer<VersionDetail>>;
  file(
    scope: string,
    name: string,
    version: string,
    path: string,
    assertion?: string,
  ): Promise<RegistryAnswer<Buffer>>;
  list(page: number, pageSize: number, assertion?: string): Promise<ListResponse>;
  search(q: string, assertion?: string): Promise<SearchResponse>;
  close(): Promise<void>;
}

export interface RegistryClientOptions {
  /** Registry API origin (a path prefix is kept). */
  url: string;
  timeoutMs: number;
  logger: Logger;
}

/** The edge's connections to the registry: a keep-alive pool, each request in the caller's trace. */
function poolTransport(pool: Pool, origin: string): Transport {
  const failure = (error: unknown) =>
    new TransportError(String((error as { code?: unknown }).code ?? (error as Error).name), {
      reason: (error as Error).message,
      cause: error,
    });
  return async (request) => {
    let res: Awaited<ReturnType<Pool['request']>>;
    try {
      res = await pool.request({
        path: request.url.slice(origin.length),
        method: request.method,
        // With tracing on, the registry's request span joins this request's trace (W3C traceparent).
        headers: withTraceHeaders(request.headers),
        body: request.body,
      });
    } catch (error) {
      throw failure(error);
    }
    return {
      status: res.statusCode,
      statusText: '',
      header: (name) => {
        const value = res.headers[name];
        return Array.isArray(value) ? value[0] : value;
      },
      async read(maxBytes) {
        try {
          // A body of a declared length within the bound is taken whole (undici holds it to that
          // length); the chunk by chunk read is for the rest.
          const declared = Number(res.headers['content-length'] ?? Number.NaN);
          if (declared <= maxBytes)
            return { bytes: Buffer.from(await res.body.arrayBuffer()), truncated: false };
          return await readChunks(res.body, maxBytes, () => res.body.destroy());
        } catch (error) {
          throw failure(error);
        }
      },
      discard() {
        res.body.dump().catch(() => {});
      },
    };
  };
}

const asBuffer = (bytes: Uint8Array) =>
  Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);

export function createRegistryClient(options: RegistryClientOptions): RegistryClient {
  const base = new URL(options.url);
  const pool = new Pool(base.origin, {
    connections: 16,
    headersTimeout: options.timeoutMs,
    bodyTimeout: options.timeoutMs,
    keepAliveTimeout: 30_000,
  });
  const client = createClient({
    baseUrl: `${base.origin}${base.pathname}`,
    transport: poolTransport(pool, base.origin),
  });

  /**
   * A registry answering outside its contract, or not at all, is a deployment fault: logged, retryable.
   * A 401 to a delegated read says the person's delegation no longer counts (revoked, the account
   * suspended; or the registry does not trust this edge): the caller's token is no good.
   */
  function unavailable(error: unknown, delegated: boolean): RejectError {
    if (!(error instanceof RegistryError)) throw error;
    if (delegated && error.code === 'status' && error.status === 401) {
      options.logger.warn({ registry: error.request }, 'registry refused a delegation assertion');
      return new RejectError('token_invalid', 'the registry refused to read as this person');
    }
    const detail =
      error.code === 'status'
        ? { status: error.status }
        : error.code === 'malformed'
          ? error.issues
            ? { issues: error.issues }
            : { body: 'not JSON' }
          : { err: error.failure ?? error.message };
    const path = error.request.slice(error.request.indexOf(' ') + 1);
    options.logger.warn({ registry: path, ...detail }, 'registry request failed');
    return new RejectError('registry_unavailable');
  }

  /** 400 too: the edge checked every part of the path already, so the registry refusing one means it
   * names nothing the registry serves. */
  function notServed(error: unknown, assertion: string | undefined): { status: 404 | 410; error: string } {
    if (error instanceof RegistryError && error.code === 'status') {
      const status = error.status ?? 0;
      if (status === 404 || status === 410 || status === 400)
        return { status: status === 410 ? 410 : 404, error: error.error ?? 'Not found' };
    }
    throw unavailable(error, assertion !== undefined);
  }

  /** A list or search answer: anything but 200 is the registry's fault, or the caller's (400). */
  function refused(error: unknown, assertion: string | undefined): never {
    if (error instanceof RegistryError && error.code === 'status' && error.status === 400)
      throw new RejectError('request_schema_invalid', error.error ?? 'Not found');
    throw unavailable(error, assertion !== undefined);
  }

  return {
    async detail(scope, name, etag, assertion) {
      try {
        return await client.revalidateDetail(scope, name, etag, { token: assertion });
      } catch (error) {
        return notServed(error, assertion);
      }
    },
    async version(scope, name, version, assertion) {
      try {
        return {
          status: 200,
          body: await client.version(scope, name, version, { token: assertion }),
          etag: undefined,
        };
      } catch (error) {
        return notServed(error, assertion);
      }
    },
    async file(scope, name, version, path, assertion) {
      try {
        return {
          status: 200,
          body: asBuffer(await client.file(scope, name, version, path, { token: assertion })),
          etag: undefined,
        };
      } catch (error) {
        return notServed(error, assertion);
      }
    },
    list: (page, pageSize, assertion) =>
      client
        .list({ page, pageSize, sort: 'name', order: 'asc' }, { token: assertion })
        .catch((error) => refused(error, assertion)),
    search: (q, assertion) =>
      client.search(q, {}, { token: assertion }).catch((error) => refused(error, assertion)),
    close: () => pool.close(),
  };
}
