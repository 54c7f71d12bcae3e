import type { Db } from '@pkgreg/db';
import type { PackageKey } from './package-path.js';
import { getPackageDetail } from './packages.service.js';

/** A visible package, ready to send: detail already serialized, SKILL.md, and the row version. */
export interface CachedPackage {
  version: string;
  detailJson: string;
  skillMd: string;
}

export interface PackageCache {
  get(key: PackageKey): Promise<CachedPackage>;
}

/**
 * A per-process micro-cache in front of detail and skill-md (docs/decisions.md): each package is read
 * and serialized at most once per `ttlMs`, so a hot package costs no query and no JSON.stringify. Its
 * price is staleness: a change (downloads folded, re-indexed, delisted) shows within `ttlMs` more.
 * Concurrent misses share one query; misses (404) are not cached. `ttlMs` 0 turns it off.
 */
export function createPackageCache(db: Db, options: { ttlMs: number; maxEntries?: number }): PackageCache {
  const maxEntries = options.maxEntries ?? 10_000;
  const entries = new Map<string, { expires: number; value: Promise<CachedPackage> }>();

  const load = async (key: PackageKey): Promise<CachedPackage> => {
    const detail = await getPackageDetail(db, key);
    return {
      version: detail.version,
      detailJson: JSON.stringify(detail.value),
      skillMd: detail.value.skillMdRaw,
    };
  };

  return {
    get(key) {
      if (options.ttlMs <= 0) return load(key);
      const id = `${key.scope}/${key.name}`;
      const now = Date.now();
      const hit = entries.get(id);
      if (hit && hit.expires > now) return hit.value;
      entries.delete(id);
      if (entries.size >= maxEntries) {
        const oldest = entries.keys().next().value; // Map keeps insertion order
        if (oldest !== undefined) entries.delete(oldest);
      }
      const value = load(key);
      entries.set(id, { expires: now + options.ttlMs, value });
      value.catch(() => {
        if (entries.get(id)?.value === value) entries.delete(id);
      });
      return value;
    },
  };
}
