import type {
  ErrorBody,
  ListQuery,
  ListResponse,
  PackageDetail,
  SearchResponse,
  TrackResponse,
} from '@pkgreg/contracts';

// The public REST API only (registry-api.md), same origin: proxied by the dev server, served alongside
// by registry-api in production. Types come from @pkgreg/contracts; its zod schemas stay out of the bundle.

const TIMEOUT_MS = 10_000;

/** The API answered with an error status and (usually) an `{error}` body. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

/** The registry could not be reached (network error, timeout, or a proxy/gateway answering for it). */
export class RegistryUnavailableError extends Error {
  constructor(message = 'The registry is not reachable') {
    super(message);
    this.name = 'RegistryUnavailableError';
  }
}

export function packagePath(scope: string, name: string): string {
  return `/api/packages/@${encodeURIComponent(scope)}/${encodeURIComponent(name)}`;
}

async function request<T>(path: string, init: RequestInit & { signal?: AbortSignal } = {}): Promise<T> {
  const timeout = AbortSignal.timeout(TIMEOUT_MS);
  const signal = init.signal ? AbortSignal.any([init.signal, timeout]) : timeout;
  let response: Response;
  try {
    response = await fetch(path, { ...init, signal, headers: { accept: 'application/json' } });
  } catch (error) {
    // The caller's own abort is not an outage: let it through so stale requests are simply dropped.
    if (init.signal?.aborted) throw error;
    throw new RegistryUnavailableError();
  }
  const text = await response.text();
  let body: unknown;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    body = undefined;
  }
  if (!response.ok) {
    const message = (body as Partial<ErrorBody> | undefined)?.error;
    // A 5xx without our JSON error body comes from a proxy or gateway in front of a registry that is down.
    if (response.status >= 500 && typeof message !== 'string') throw new RegistryUnavailableError();
    throw new ApiError(response.status, typeof message === 'string' ? message : response.statusText);
  }
  if (body === undefined) throw new RegistryUnavailableError('The registry sent an unreadable answer');
  return body as T;
}

export function listPackages(query: ListQuery, signal?: AbortSignal): Promise<ListResponse> {
  const params = new URLSearchParams({
    page: String(query.page),
    pageSize: String(query.pageSize),
    sort: query.sort,
    order: query.order,
  });
  return request<ListResponse>(`/api/packages?${params}`, { signal });
}

export function searchPackages(q: string, signal?: AbortSignal): Promise<SearchResponse> {
  return request<SearchResponse>(`/api/search?${new URLSearchParams({ q })}`, { signal });
}

export function getPackage(scope: string, name: string, signal?: AbortSignal): Promise<PackageDetail> {
  return request<PackageDetail>(packagePath(scope, name), { signal });
}

/** Counts one download (registry-api.md: track). Callers fire and forget. */
export function trackDownload(scope: string, name: string): Promise<TrackResponse> {
  return request<TrackResponse>(`${packagePath(scope, name)}/track`, { method: 'POST', keepalive: true });
}

export function sourceUrl(scope: string, name: string): string {
  return `${packagePath(scope, name)}/source`;
}
