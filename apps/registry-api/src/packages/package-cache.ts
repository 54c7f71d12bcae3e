import type { Db } from '@pkgreg/db';
import { etagFor } from '../http/etag.js';
import type { PackageKey } from './package-path.js';
import { getPackageDetail } from './packages.service.js';

/** One representation, encoded once: the hot path writes these bytes and headers as they are. */
export interface EncodedBody {
  etag: string;
  bytes: Buffer;
  /** Content-Length, already a string (setHeader would convert it on every response). */
  length: string;
}

/** A visible package, ready to send: detail JSON and SKILL.md, each with its ETag from the row version. */
export interface CachedPackage {
  detail: EncodedBody;
  skillMd: EncodedBody;
}

function encode(text: string, etag: string): EncodedBody {
  const bytes = Buffer.from(text, 'utf8');
  return { etag, bytes, length: String(bytes.length) };
}

export interface PackageCache {
  get(key: PackageKey): Promise<CachedPackage>;
}

/**
 * A per-process micro-cache in front of detail and skill-md (docs/decisions.md): each package is read
 * and encoded at most once per `ttlMs`, so a hot package costs no query, no JSON.stringify and no
 * string-to-bytes conversion. Its
 * price is staleness: a change (downloads folded, re-indexed, delisted) shows within `ttlMs` more.
 * Concurrent misses share one query; misses (404) are not cached. `ttlMs` 0 turns it off.
 */
export function createPackageCache(db: Db, options: { ttlMs: number; maxEntries?: number }): PackageCache {
  const maxEntries = options.maxEntries ?? 10_000;
  const entries = new Map<string, { expires: number; value: Promise<CachedPackage> }>();

  const load = async (key: PackageKey): Promise<CachedPackage> => {
    const detail = await getPackageDetail(db, key);
    return {
      detail: encode(JSON.stringify(detail.value), etagFor(detail.version, 'json')),
      skillMd: encode(detail.value.skillMdRaw, etagFor(detail.version, 'md')),
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
