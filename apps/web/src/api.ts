import type {
  DependantsResponse,
  ListQuery,
  ListResponse,
  PackageDetail,
  PackageFilters,
  SearchResponse,
  TrackResponse,
  VersionDetail,
  VersionListResponse,
} from '@pkgreg/contracts';
import type { FileHead, RegistryClient, RegistryError } from '@pkgreg/registry-client';
import { archivePath, filePath, packagePath, sourcePath } from '@pkgreg/registry-client/paths';

// The public REST API only (registry-api.md), same origin: proxied by the dev server, served alongside
// by registry-api in production. Every answer is parsed by its contract schema (@pkgreg/registry-client).

export { type FileHead, packagePath };

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

/** What the page shows for a failure: the registry's own message, or that it is not there. */
function pageError(error: RegistryError): Error {
  if (error.code === 'status') {
    const status = error.status ?? 0;
    // A 5xx without our JSON error body comes from a proxy or gateway in front of a registry that is down.
    if (status >= 500 && error.error === undefined) return new RegistryUnavailableError();
    return new ApiError(status, error.error ?? error.statusText ?? '');
  }
  if (error.code === 'malformed')
    return new RegistryUnavailableError('The registry sent an unreadable answer');
  return new RegistryUnavailableError();
}

// The client, zod and the contract schemas are a chunk of their own (docs/benchmarks.md, "Structure
// change (issue 27): the registry client and the CLI"): asked for as the page starts, beside its first
// chunk, and awaited by the first request.
const loaded = import('@pkgreg/registry-client').then(({ createRegistryClient, fetchTransport }) =>
  createRegistryClient({
    baseUrl: '',
    // The API lets caches keep lists for a minute (docs/caching.md); the UI revalidates every time instead
    // (a 304 when nothing changed), so it shows a delist or an outage at once, never a stale page.
    transport: fetchTransport({ init: { cache: 'no-cache' }, timeoutMs: TIMEOUT_MS }),
    mapError: pageError,
  }),
);

/** Runs a call once the client is loaded; a chunk that fails to load is the registry not being reached. */
async function withClient<T>(call: (client: RegistryClient) => Promise<T>): Promise<T> {
  let client: RegistryClient;
  try {
    client = await loaded;
  } catch {
    throw new RegistryUnavailableError();
  }
  return call(client);
}

export function listPackages(query: ListQuery, signal?: AbortSignal): Promise<ListResponse> {
  return withClient((client) => client.list(query, { signal }));
}

export function searchPackages(
  q: string,
  filters: PackageFilters = {},
  signal?: AbortSignal,
): Promise<SearchResponse> {
  return withClient((client) => client.search(q, filters, { signal }));
}

export function getPackage(scope: string, name: string, signal?: AbortSignal): Promise<PackageDetail> {
  return withClient((client) => client.detail(scope, name, { signal }));
}

/** Counts one download (registry-api.md: track). Callers fire and forget. */
export function trackDownload(scope: string, name: string): Promise<TrackResponse> {
  return withClient((client) => client.track(scope, name));
}

export function sourceUrl(scope: string, name: string): string {
  return sourcePath(scope, name);
}

/** The newest versions first; one page of the API's largest size (docs/versions.md). */
export function listVersions(
  scope: string,
  name: string,
  signal?: AbortSignal,
): Promise<VersionListResponse> {
  return withClient((client) => client.versions(scope, name, 1, 100, { signal }));
}

/** A page of the packages whose latest version depends on this one (docs/versions.md, Dependencies). */
export function listDependants(
  scope: string,
  name: string,
  page: number,
  pageSize: number,
  signal?: AbortSignal,
): Promise<DependantsResponse> {
  return withClient((client) => client.dependants(scope, name, page, pageSize, { signal }));
}

/** `version`: an exact version, or `latest`. */
export function getVersion(
  scope: string,
  name: string,
  version: string,
  signal?: AbortSignal,
): Promise<VersionDetail> {
  return withClient((client) => client.version(scope, name, version, { signal }));
}

/** Where a version was built from, as its provenance attestation says (docs/provenance.md). */
export interface BuiltFrom {
  repository: string;
  commit: string;
  /** The CI run that published it (a URL), when it was published from CI. */
  run: string | null;
}

/**
 * The source the registry attested for a version, from its attestation's statement; null when it has
 * none. Shown, not verified: the CLI's `pkgreg verify` and `openssl` verify (docs/provenance.md).
 */
export async function getBuiltFrom(
  scope: string,
  name: string,
  version: string,
  signal?: AbortSignal,
): Promise<BuiltFrom | null> {
  const { attestations } = await withClient((client) =>
    client.attestations(scope, name, version, { signal }),
  );
  const [first] = attestations;
  if (!first) return null;
  try {
    const statement = JSON.parse(atob(first.envelope.payload)) as {
      predicate?: { buildDefinition?: { externalParameters?: Record<string, unknown> } };
    };
    const params = statement.predicate?.buildDefinition?.externalParameters ?? {};
    const { repository, commit, run } = params;
    if (typeof repository !== 'string' || typeof commit !== 'string') return null;
    return { repository, commit, run: typeof run === 'string' ? run : null };
  } catch {
    return null;
  }
}

/** The bytes of a file of an exact version (served with a sandbox CSP, so opening it runs nothing). */
export function fileUrl(scope: string, name: string, version: string, path: string): string {
  return filePath(scope, name, version, path);
}

export function archiveUrl(scope: string, name: string, version: string): string {
  return archivePath(scope, name, version);
}

/** The name registry-api's Content-Disposition gives an archive. */
export function archiveFilename(scope: string, name: string, version: string): string {
  return `${scope}-${name}-${version}.tgz`;
}

/** The first `limit` bytes of a file: the rest is not downloaded (the stream is cancelled). */
export function fetchFileHead(
  scope: string,
  name: string,
  version: string,
  path: string,
  limit: number,
  signal?: AbortSignal,
): Promise<FileHead> {
  return withClient((client) => client.fileHead(scope, name, version, path, limit, { signal }));
}

const decoder = new TextDecoder();

/** A whole text file (SKILL.md of an older version). */
export async function fetchFileText(
  scope: string,
  name: string,
  version: string,
  path: string,
  signal?: AbortSignal,
): Promise<string> {
  return decoder.decode(await withClient((client) => client.file(scope, name, version, path, { signal })));
}
