import {
  ErrorBodySchema,
  type ListResponse,
  ListResponseSchema,
  type PackageDetail,
  PackageDetailSchema,
  RejectError,
  type SearchResponse,
  SearchResponseSchema,
  type VersionDetail,
  VersionDetailSchema,
} from '@pkgreg/contracts';
import { type Logger, withTraceHeaders } from '@pkgreg/server-kit';
import { Pool } from 'undici';
import type { z } from 'zod';

// The registry's REST API (registry-api.md, docs/versions.md) as the edge reads it: the registry stays the
// one authority on what is visible, and every answer is parsed by its contract schema before use. A
// registry that cannot be reached, times out or answers 5xx is `registry_unavailable` (503, retryable).

/** What a read of one package, version or file can come back as. */
export type RegistryAnswer<T> =
  | { status: 200; body: T; etag: string | undefined }
  /** Not found (a delisted package is not found too), or removed by an operator (410), with its message. */
  | { status: 404 | 410; error: string };

/** Detail is asked conditionally: unchanged since the ETag sent. */
export type DetailAnswer = RegistryAnswer<PackageDetail> | { status: 304 };

export interface RegistryClient {
  detail(scope: string, name: string, etag?: string): Promise<DetailAnswer>;
  version(scope: string, name: string, version: string): Promise<RegistryAnswer<VersionDetail>>;
  file(scope: string, name: string, version: string, path: string): Promise<RegistryAnswer<Buffer>>;
  list(page: number, pageSize: number): Promise<ListResponse>;
  search(q: string): Promise<SearchResponse>;
  close(): Promise<void>;
}

export interface RegistryClientOptions {
  /** Registry API origin (a path prefix is kept). */
  url: string;
  timeoutMs: number;
  logger: Logger;
}

const pkgPath = (scope: string, name: string) => `/api/packages/@${scope}/${name}`;
const segments = (path: string) => path.split('/').map(encodeURIComponent).join('/');

export function createRegistryClient(options: RegistryClientOptions): RegistryClient {
  const base = new URL(options.url);
  const prefix = base.pathname.replace(/\/+$/, '');
  const pool = new Pool(base.origin, {
    connections: 16,
    headersTimeout: options.timeoutMs,
    bodyTimeout: options.timeoutMs,
    keepAliveTimeout: 30_000,
  });

  const unavailable = (what: string, detail: Record<string, unknown>) => {
    options.logger.warn({ registry: what, ...detail }, 'registry request failed');
    return new RejectError('registry_unavailable');
  };

  async function get(path: string, headers: Record<string, string> = {}) {
    try {
      // With tracing on, the registry's request span joins this request's trace (W3C traceparent).
      const res = await pool.request({
        path: prefix + path,
        method: 'GET',
        headers: withTraceHeaders(headers),
      });
      return {
        status: res.statusCode,
        headers: res.headers,
        bytes: Buffer.from(await res.body.arrayBuffer()),
      };
    } catch (error) {
      throw unavailable(path, { err: (error as Error).message });
    }
  }

  function parse<T>(schema: z.ZodType<T>, bytes: Buffer, path: string): T {
    let json: unknown;
    try {
      json = JSON.parse(bytes.toString('utf8'));
    } catch {
      throw unavailable(path, { body: 'not JSON' });
    }
    const parsed = schema.safeParse(json);
    // A registry answering outside its contract is a deployment fault: logged, and retryable for callers.
    if (!parsed.success) throw unavailable(path, { issues: parsed.error.issues.slice(0, 5) });
    return parsed.data;
  }

  function errorOf(bytes: Buffer): string {
    try {
      return ErrorBodySchema.parse(JSON.parse(bytes.toString('utf8'))).error;
    } catch {
      return 'Not found';
    }
  }

  async function read<T>(
    path: string,
    body: (bytes: Buffer) => T,
    etag?: string,
  ): Promise<RegistryAnswer<T> | { status: 304 }> {
    const res = await get(path, etag ? { 'if-none-match': etag } : {});
    if (res.status === 200) {
      const tag = typeof res.headers.etag === 'string' ? res.headers.etag : undefined;
      return { status: 200, body: body(res.bytes), etag: tag };
    }
    if (res.status === 304 && etag) return { status: 304 };
    // 400 too: the edge checked every part of the path already, so the registry refusing one means it
    // names nothing the registry serves.
    if (res.status === 404 || res.status === 410 || res.status === 400) {
      return { status: res.status === 410 ? 410 : 404, error: errorOf(res.bytes) };
    }
    throw unavailable(path, { status: res.status });
  }

  /** A list or search answer: anything but 200 is the registry's fault, or the caller's (400). */
  async function query<T>(path: string, schema: z.ZodType<T>): Promise<T> {
    const res = await get(path);
    if (res.status === 200) return parse(schema, res.bytes, path);
    if (res.status === 400) throw new RejectError('request_schema_invalid', errorOf(res.bytes));
    throw unavailable(path, { status: res.status });
  }

  /** An unconditional read: 304 cannot come back. */
  const readWhole = read as <T>(path: string, body: (bytes: Buffer) => T) => Promise<RegistryAnswer<T>>;

  return {
    detail(scope, name, etag) {
      const path = pkgPath(scope, name);
      return read(path, (b) => parse(PackageDetailSchema, b, path), etag);
    },
    version(scope, name, version) {
      const path = `${pkgPath(scope, name)}/versions/${encodeURIComponent(version)}`;
      return readWhole(path, (b) => parse(VersionDetailSchema, b, path));
    },
    file(scope, name, version, filePath) {
      const path = `${pkgPath(scope, name)}/versions/${encodeURIComponent(version)}/files/${segments(filePath)}`;
      return readWhole(path, (b) => b);
    },
    list(page, pageSize) {
      return query(`/api/packages?page=${page}&pageSize=${pageSize}&sort=name&order=asc`, ListResponseSchema);
    },
    search(q) {
      return query(`/api/search?q=${encodeURIComponent(q)}`, SearchResponseSchema);
    },
    close: () => pool.close(),
  };
}
