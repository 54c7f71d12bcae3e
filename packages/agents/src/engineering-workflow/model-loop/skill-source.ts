import {
  SearchResponseSchema,
  type SearchResultItem,
  type VersionDetail,
  VersionDetailSchema,
} from '@pkgreg/contracts';
import { type Dispatcher, request } from 'undici';

// The registry's skills as the loop reads them: its REST API (registry-api.md, docs/versions.md), the
// same path every other reader takes, so the registry stays the one authority on what is visible. A
// read carries the caller's delegation assertion when the run has one (docs/accounts.md, "Reading through
// the MCP edge"); without one it is anonymous and a private package is missing, as it is to anyone else.

export interface SkillReadAs {
  /** The registry's bearer for a person's read; absent reads anonymously (public packages only). */
  assertion?: string | undefined;
  /**
   * Called when the registry refuses the person (401: the delegation was revoked since the job was
   * queued, the account suspended, the worker's issuer or audience not the edge's): the read is then
   * made again anonymously, and the caller reads anonymously from then on.
   */
  onRefused?: (() => void) | undefined;
}

export interface SkillSource {
  search(query: string, as?: SkillReadAs): Promise<SearchResultItem[]>;
  /** A version's record (`latest` or exact); null when the registry serves none to this reader. */
  version(scope: string, name: string, version: string, as?: SkillReadAs): Promise<VersionDetail | null>;
  /** A file's bytes, at most `maxBytes` (then `truncated`); null when not served. */
  file(
    scope: string,
    name: string,
    version: string,
    path: string,
    maxBytes: number,
    as?: SkillReadAs,
  ): Promise<{ bytes: Buffer; truncated: boolean } | null>;
}

const packagePath = (scope: string, name: string) =>
  `/api/packages/@${encodeURIComponent(scope)}/${encodeURIComponent(name)}`;
const versionPath = (scope: string, name: string, version: string) =>
  `${packagePath(scope, name)}/versions/${encodeURIComponent(version)}`;

/** Answers that mean "this reader gets nothing here": missing, private to others, removed, bad path. */
const NOT_SERVED = new Set([400, 404, 410]);

/** `baseUrl`: the registry API origin (REGISTRY_URL). */
export function createHttpSkillSource(baseUrl: string, timeoutMs = 3000): SkillSource {
  const base = baseUrl.replace(/\/+$/, '');
  const get = async (
    path: string,
    as: SkillReadAs | undefined,
    accept: string,
  ): Promise<Dispatcher.ResponseData | null> => {
    const res = await request(`${base}${path}`, {
      method: 'GET',
      headers: { accept, ...(as?.assertion ? { authorization: `Bearer ${as.assertion}` } : {}) },
      signal: AbortSignal.timeout(timeoutMs),
    });
    if (res.statusCode === 200) return res;
    await res.body.dump();
    if (NOT_SERVED.has(res.statusCode)) return null;
    // A 401 to a person's read: the registry no longer honours them. The run then reads what anyone
    // may, as a run without a person does.
    if (res.statusCode === 401 && as?.assertion) {
      as.onRefused?.();
      return get(path, undefined, accept);
    }
    throw new Error(`registry answered ${res.statusCode}`);
  };
  return {
    async search(query, as) {
      const res = await get(`/api/search?q=${encodeURIComponent(query)}`, as, 'application/json');
      return res ? SearchResponseSchema.parse(await res.body.json()).results : [];
    },
    async version(scope, name, version, as) {
      const res = await get(versionPath(scope, name, version), as, 'application/json');
      return res ? VersionDetailSchema.parse(await res.body.json()) : null;
    },
    async file(scope, name, version, path, maxBytes, as) {
      const segments = path.split('/').map(encodeURIComponent).join('/');
      const res = await get(`${versionPath(scope, name, version)}/files/${segments}`, as, '*/*');
      if (!res) return null;
      const chunks: Buffer[] = [];
      let size = 0;
      let truncated = false;
      for await (const chunk of res.body as AsyncIterable<Buffer>) {
        chunks.push(chunk);
        size += chunk.length;
        if (size > maxBytes) {
          truncated = true;
          res.body.destroy();
          break;
        }
      }
      const bytes = Buffer.concat(chunks);
      return { bytes: truncated ? bytes.subarray(0, maxBytes) : bytes, truncated };
    },
  };
}
