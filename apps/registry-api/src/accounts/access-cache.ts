import { type Db, listenFor, type Notifications } from '@pkgreg/db';
import { LRUCache } from 'lru-cache';

// What credentials resolve to (a token's row, an account's reach), kept in memory so that an
// authenticated read costs what an anonymous one does (docs/accounts.md, "What a request costs").
// Kept only while this process LISTENs to `pkgreg_access` (migration 2026-11-29T0200-access-changes):
// every change of tokens, memberships, organisations, scope settings or owners, linked identities or
// suspensions notifies it on commit, and everything kept is dropped. A write this process answers drops
// it too, before its response leaves (`forget`), so the writer's next request never sees the old reach.
// A connection lost drops everything and keeps nothing until LISTEN is back; `ttlMs` bounds what the
// database cannot notify (a suspension that lapses).

export interface AccessCacheOptions {
  /** How long a resolution is kept at most; 0 keeps nothing (every request reads the database). */
  ttlMs: number;
  /** Entries kept at most (the least recently used go first). */
  max: number;
}

export interface AccessCache {
  /**
   * `load()`'s value for `key`, from memory when kept; a value `keep` refuses (a refusal, say) is
   * never kept.
   */
  get<T extends object>(key: string, load: () => Promise<T>, keep?: (value: T) => boolean): Promise<T>;
  /** What is kept for `key`, without loading it (the hit path, answered synchronously). */
  peek<T extends object>(key: string): T | undefined;
  /** Drops everything kept (an access change this process made). */
  forget(): void;
  /** Whether `key` is kept now (tests, metrics). */
  has(key: string): boolean;
  /** How many resolutions are kept now. */
  size(): number;
  close(): Promise<void>;
}

export const ACCESS_CHANNEL = 'pkgreg_access';

export function createAccessCache(db: Db, options: AccessCacheOptions): AccessCache {
  const entries =
    options.ttlMs > 0 ? new LRUCache<string, object>({ max: options.max, ttl: options.ttlMs }) : undefined;
  // Bumped by every forget: a load that started before one does not keep what it read.
  let generation = 0;
  let notifications: Notifications | undefined;
  const forget = () => {
    generation += 1;
    entries?.clear();
  };
  return {
    async get<T extends object>(
      key: string,
      load: () => Promise<T>,
      keep: (value: T) => boolean = () => true,
    ) {
      if (!entries) return load();
      const hit = entries.get(key);
      if (hit) return hit as T;
      // LISTEN from the first credentials this process sees: a process that serves only anonymous
      // readers holds no connection for it.
      notifications ??= listenFor(db, ACCESS_CHANNEL, { onNotification: forget, onLost: forget });
      const started = generation;
      const value = await load();
      if (started === generation && notifications.listening && keep(value)) entries.set(key, value);
      return value;
    },
    peek: <T extends object>(key: string) => entries?.get(key) as T | undefined,
    forget,
    has: (key) => entries?.has(key) ?? false,
    size: () => entries?.size ?? 0,
    async close() {
      forget();
      await notifications?.close();
    },
  };
}
