import type {
  DependantsResponse,
  ErrorBody,
  ListQuery,
  ListResponse,
  PackageDetail,
  PackageFilters,
  SearchResponse,
  TrackResponse,
  VersionDetail,
  VersionListResponse,
} from '@pkgreg/contracts';

import { filterParams } from './list-query.js';

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

async function send(path: string, init: RequestInit & { signal?: AbortSignal }): Promise<Response> {
  const timeout = AbortSignal.timeout(TIMEOUT_MS);
  const signal = init.signal ? AbortSignal.any([init.signal, timeout]) : timeout;
  try {
    // The API lets caches keep lists for a minute (docs/caching.md); the UI revalidates every time instead
    // (a 304 when nothing changed), so it shows a delist or an outage at once, never a stale page.
    return await fetch(path, { cache: 'no-cache', ...init, signal });
  } catch (error) {
    // The caller's own abort is not an outage: let it through so stale requests are simply dropped.
    if (init.signal?.aborted) throw error;
    throw new RegistryUnavailableError();
  }
}

function parseJson(text: string): unknown {
  try {
    return text ? JSON.parse(text) : undefined;
  } catch {
    return undefined;
  }
}

function errorOf(response: Response, body: unknown): Error {
  const message = (body as Partial<ErrorBody> | undefined)?.error;
  // A 5xx without our JSON error body comes from a proxy or gateway in front of a registry that is down.
  if (response.status >= 500 && typeof message !== 'string') return new RegistryUnavailableError();
  return new ApiError(response.status, typeof message === 'string' ? message : response.statusText);
}

async function request<T>(path: string, init: RequestInit & { signal?: AbortSignal } = {}): Promise<T> {
  const response = await send(path, { ...init, headers: { accept: 'application/json' } });
  const body = parseJson(await response.text());
  if (!response.ok) throw errorOf(response, body);
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
  for (const [name, value] of filterParams(query)) params.set(name, value);
  return request<ListResponse>(`/api/packages?${params}`, { signal });
}

export function searchPackages(
  q: string,
  filters: PackageFilters = {},
  signal?: AbortSignal,
): Promise<SearchResponse> {
  return request<SearchResponse>(`/api/search?${new URLSearchParams([['q', q], ...filterParams(filters)])}`, {
    signal,
  });
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

/** The newest versions first; one page of the API's largest size (docs/versions.md). */
export function listVersions(
  scope: string,
  name: string,
  signal?: AbortSignal,
): Promise<VersionListResponse> {
  return request<VersionListResponse>(`${packagePath(scope, name)}/versions?pageSize=100`, { signal });
}

/** A page of the packages whose latest version depends on this one (docs/versions.md, Dependencies). */
export function listDependants(
  scope: string,
  name: string,
  page: number,
  pageSize: number,
  signal?: AbortSignal,
): Promise<DependantsResponse> {
  const params = new URLSearchParams({ page: String(page), pageSize: String(pageSize) });
  return request<DependantsResponse>(`${packagePath(scope, name)}/dependants?${params}`, { signal });
}

/** `version`: an exact version, or `latest`. */
export function getVersion(
  scope: string,
  name: string,
  version: string,
  signal?: AbortSignal,
): Promise<VersionDetail> {
  return request<VersionDetail>(`${packagePath(scope, name)}/versions/${encodeURIComponent(version)}`, {
    signal,
  });
}

/** The bytes of a file of an exact version (served with a sandbox CSP, so opening it runs nothing). */
export function fileUrl(scope: string, name: string, version: string, path: string): string {
  const segments = path.split('/').map(encodeURIComponent).join('/');
  return `${packagePath(scope, name)}/versions/${encodeURIComponent(version)}/files/${segments}`;
}

export function archiveUrl(scope: string, name: string, version: string): string {
  return `${packagePath(scope, name)}/versions/${encodeURIComponent(version)}/archive.tgz`;
}

/** The name registry-api's Content-Disposition gives an archive. */
export function archiveFilename(scope: string, name: string, version: string): string {
  return `${scope}-${name}-${version}.tgz`;
}

export interface FileHead {
  /** At most `limit` bytes from the start of the file. */
  bytes: Uint8Array;
  /** Whether the file goes on past them. */
  truncated: boolean;
  contentType: string;
}

/** The first `limit` bytes of a file: the rest is not downloaded (the stream is cancelled). */
export async function fetchFileHead(url: string, limit: number, signal?: AbortSignal): Promise<FileHead> {
  const response = await send(url, { signal });
  if (!response.ok) throw errorOf(response, parseJson(await response.text()));
  const contentType = response.headers.get('content-type') ?? '';
  const reader = response.body?.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  let truncated = false;
  try {
    while (reader) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      size += value.length;
      if (size > limit) {
        truncated = true;
        await reader.cancel();
        break;
      }
    }
  } catch (error) {
    if (signal?.aborted) throw error;
    throw new RegistryUnavailableError();
  }
  const bytes = new Uint8Array(Math.min(size, limit));
  let offset = 0;
  for (const chunk of chunks) {
    const part = chunk.subarray(0, bytes.length - offset);
    bytes.set(part, offset);
    offset += part.length;
  }
  return { bytes, truncated, contentType };
}

/** A whole text file (SKILL.md of an older version). */
export async function fetchFileText(url: string, signal?: AbortSignal): Promise<string> {
  const response = await send(url, { signal });
  let text: string;
  try {
    text = await response.text();
  } catch (error) {
    if (signal?.aborted) throw error;
    throw new RegistryUnavailableError();
  }
  if (!response.ok) throw errorOf(response, parseJson(text));
  return text;
}
