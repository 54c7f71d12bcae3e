import type { ContentStore } from '@pkgreg/registry';
import { LRUCache } from 'lru-cache';

// Stored bytes are addressed by their SHA-256, so a cached copy can never be stale: the cache only
// bounds memory. Archives and files of popular versions are served without a database round trip.

export interface ContentCache {
  /** The bytes stored under `sha256`; undefined when the store has none. */
  get(sha256: string): Promise<Buffer | undefined>;
  /** The bytes of each of `sha256s` the store has: cached ones as they are, the others in one read. */
  getMany(sha256s: readonly string[]): Promise<Map<string, Buffer>>;
}

export function createContentCache(store: ContentStore, maxBytes: number): ContentCache {
  const cache = new LRUCache<string, Buffer>({
    maxSize: Math.max(1, maxBytes),
    sizeCalculation: (b) => b.length || 1,
  });
  const loading = new Map<string, Promise<Buffer | undefined>>();
  const keep = (sha256: string, bytes: Buffer) => {
    if (maxBytes > 0 && bytes.length <= maxBytes) cache.set(sha256, bytes);
  };
  return {
    async get(sha256) {
      const hit = cache.get(sha256);
      if (hit) return hit;
      // Concurrent misses of one blob share one read.
      let pending = loading.get(sha256);
      if (!pending) {
        pending = store.get([sha256]).then((found) => {
          const bytes = found.get(sha256);
          if (bytes) keep(sha256, bytes);
          return bytes;
        });
        loading.set(sha256, pending);
        pending.finally(() => loading.delete(sha256)).catch(() => {});
      }
      return pending;
    },
    async getMany(sha256s) {
      const found = new Map<string, Buffer>();
      const missing: string[] = [];
      for (const sha256 of new Set(sha256s)) {
        const hit = cache.get(sha256);
        if (hit) found.set(sha256, hit);
        else missing.push(sha256);
      }
      if (missing.length === 0) return found;
      for (const [sha256, bytes] of await store.get(missing)) {
        keep(sha256, bytes);
        found.set(sha256, bytes);
      }
      return found;
    },
  };
}
