import type { Db } from '@pkgreg/db';
import { isPublicOnly, PUBLIC_ONLY, type ReadAccess } from '@pkgreg/registry';
import { type EncodedBody, encodeBody, etagFor, weakEtagOf } from '../http/etag.js';
import type { PackageKey } from './package-path.js';
import { findVisibleVersions } from './packages.repository.js';
import { getPackageDetail, quarantinedMessage } from './packages.service.js';

/** A visible package, ready to send: detail JSON and SKILL.md, each with its ETag from the row version. */
export interface CachedPackage {
  detail: EncodedBody;
  /** A quarantined package's SKILL.md is never served: the 410 message instead. */
  skillMd: EncodedBody | { gone: string };
  /** The package is private (never in the cache: read per request for readers that may read it). */
  private: boolean;
  /** `detail` leaves out dependencies on private packages: a reader with private access reads its own. */
  hidesDependencies: boolean;
}

export interface PackageCache {
  /** A public package as anyone sees it (cached); a 404 ApiError for a missing, delisted or private one. */
  get(key: PackageKey): Promise<CachedPackage>;
  /**
   * The package as `access` sees it, read now and never cached: a reader with private access asking for
   * a private package, or for one whose cached detail hides dependencies from outsiders.
   */
  readFor(key: PackageKey, access: ReadAccess): Promise<CachedPackage>;
  /**
   * The entry for `scope/name` when it is loaded and may still be served, else undefined. Synchronous,
   * so a cache hit of the package endpoints (package-endpoints.ts) costs one Map lookup.
   */
  peek(id: string): CachedPackage | undefined;
  /** Resolves once no background revalidation is waiting or running (tests wait on it, not a clock). */
  settled(): Promise<void>;
}

export interface PackageCacheOptions {
  /** How long an entry is served without asking the database (0 = no cache). */
  ttlMs: number;
  maxEntries?: number;
  /** How long expired entries are collected before one query revalidates them all. */
  revalidateDelayMs?: number;
}

interface Entry {
  key: PackageKey;
  /** Served as is until then. */
  freshUntil: number;
  value: Promise<CachedPackage>;
  /** Set once `value` resolved, with the version (`id.row_version`) it was built from. */
  loaded?: CachedPackage;
  version?: string;
  revalidating?: boolean;
}

/**
 * A per-process micro-cache in front of detail and skill-md (docs/decisions.md). It holds public
 * packages only, as anyone sees them: a private package is read per request (readFor), so to an outsider
 * it costs the query a missing package costs and answers the same 404. Each package is read
 * and encoded once, so a hot package costs no query, no JSON.stringify and no string-to-bytes
 * conversion. An entry is served as is for `ttlMs`. For one more `ttlMs` after that it is still
 * served while it is revalidated in the background: the expired entries of that moment are checked in
 * ONE query for their current row versions; an unchanged package keeps its bytes for another `ttlMs`,
 * a changed one is reloaded, a delisted or deleted one is dropped (the next request reads the
 * database and gets its 404). So a response is at most 2 x `ttlMs` behind the database, and a
 * package requested every second costs one version check a second, batched with others, instead of
 * a full read and re-encoding. Concurrent misses share one query; misses (404) are not cached.
 */
export function createPackageCache(db: Db, options: PackageCacheOptions): PackageCache {
  const maxEntries = options.maxEntries ?? 10_000;
  const { ttlMs } = options;
  const revalidateDelayMs = options.revalidateDelayMs ?? Math.min(20, ttlMs);
  const entries = new Map<string, Entry>();
  let toRevalidate: Entry[] = [];
  let revalidations = 0;
  let whenSettled: (() => void)[] = [];
  const revalidationDone = () => {
    revalidations -= 1;
    if (revalidations > 0) return;
    const waiting = whenSettled;
    whenSettled = [];
    for (const resolve of waiting) resolve();
  };

  const load = async (
    key: PackageKey,
    access: ReadAccess = PUBLIC_ONLY,
  ): Promise<{ cached: CachedPackage; version: string }> => {
    const detail = await getPackageDetail(db, key, access);
    // A detail that shows a reader's private dependencies differs from the one outsiders get under the
    // same row version: its ETag says whose it is, so a client switching credentials never gets a 304
    // for the other answer.
    const detailTag =
      isPublicOnly(access) || !detail.value.dependencies.length
        ? etagFor(detail.version, 'json')
        : weakEtagOf(detail.version, JSON.stringify(detail.value.dependencies));
    return {
      cached: {
        detail: encodeBody(JSON.stringify(detail.value), detailTag),
        skillMd:
          detail.value.status === 'quarantined'
            ? { gone: quarantinedMessage(key, detail.value.quarantineReason) }
            : encodeBody(detail.value.skillMdRaw, etagFor(detail.version, 'md')),
        private: detail.private,
        hidesDependencies: detail.hidesDependencies,
      },
      version: detail.version,
    };
  };

  const insert = (id: string, key: PackageKey): Entry => {
    entries.delete(id);
    if (entries.size >= maxEntries) {
      const oldest = entries.keys().next().value; // Map keeps insertion order
      if (oldest !== undefined) entries.delete(oldest);
    }
    const loading = load(key);
    const entry: Entry = {
      key,
      freshUntil: Date.now() + ttlMs,
      value: loading.then((r) => r.cached),
    };
    entries.set(id, entry);
    loading.then(
      ({ cached, version }) => {
        entry.loaded = cached;
        entry.version = version;
      },
      () => {
        if (entries.get(id) === entry) entries.delete(id);
      },
    );
    return entry;
  };

  const revalidate = async () => {
    const batch = toRevalidate;
    toRevalidate = [];
    let versions: Map<string, string>;
    try {
      versions = await findVisibleVersions(
        db,
        batch.map((e) => e.key),
      );
    } catch {
      // Database trouble: drop them, so the next request reads (and reports) for itself.
      for (const entry of batch) dropIfCurrent(entry);
      return;
    }
    const now = Date.now();
    const reloads: Promise<void>[] = [];
    for (const entry of batch) {
      const id = `${entry.key.scope}/${entry.key.name}`;
      const version = versions.get(id);
      if (entries.get(id) !== entry) continue;
      if (version === undefined) entries.delete(id);
      else if (version === entry.version) {
        entry.freshUntil = now + ttlMs;
        entry.revalidating = false;
      } else {
        // Changed: keep serving the old bytes (still within the grace period) until the new ones exist.
        reloads.push(
          load(entry.key).then(
            ({ cached, version: loadedVersion }) => {
              if (entries.get(id) !== entry) return;
              entry.loaded = cached;
              entry.version = loadedVersion;
              entry.value = Promise.resolve(cached);
              entry.freshUntil = Date.now() + ttlMs;
              entry.revalidating = false;
            },
            () => dropIfCurrent(entry),
          ),
        );
      }
    }
    await Promise.all(reloads);
  };

  const dropIfCurrent = (entry: Entry) => {
    const id = `${entry.key.scope}/${entry.key.name}`;
    if (entries.get(id) === entry) entries.delete(id);
  };

  /** The entry's bytes if they may be served now (scheduling a revalidation once they expired). */
  const servable = (entry: Entry, now: number): CachedPackage | undefined => {
    if (!entry.loaded) return undefined;
    if (now < entry.freshUntil) return entry.loaded;
    if (now >= entry.freshUntil + ttlMs) return undefined;
    if (!entry.revalidating) {
      entry.revalidating = true;
      if (toRevalidate.length === 0) {
        revalidations += 1;
        setTimeout(() => void revalidate().finally(revalidationDone), revalidateDelayMs).unref();
      }
      toRevalidate.push(entry);
    }
    return entry.loaded;
  };

  return {
    readFor(key, access) {
      return load(key, access).then((r) => r.cached);
    },
    get(key) {
      if (ttlMs <= 0) return load(key).then((r) => r.cached);
      const id = `${key.scope}/${key.name}`;
      const entry = entries.get(id);
      if (entry) {
        const now = Date.now();
        const cached = servable(entry, now);
        if (cached) return Promise.resolve(cached);
        // Still loading for the first time: share that query.
        if (!entry.loaded && now < entry.freshUntil) return entry.value;
      }
      return insert(id, key).value;
    },
    peek(id) {
      const entry = entries.get(id);
      return entry ? servable(entry, Date.now()) : undefined;
    },
    settled() {
      return revalidations === 0 ? Promise.resolve() : new Promise((resolve) => whenSettled.push(resolve));
    },
  };
}
