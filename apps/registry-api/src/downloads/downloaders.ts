import { createHmac, createSecretKey, type KeyObject, randomBytes } from 'node:crypto';
import type { Db } from '@pkgreg/db';
import { LRUCache } from 'lru-cache';
import { downloaderAddress } from './client-address.js';
import { dayKey } from './downloads.repository.js';

/** One downloader on one UTC day. Nothing in it leads back to the address once the day's key is gone. */
export interface Downloader {
  /** The UTC day (YYYY-MM-DD) the digest is for, which is the day the call counts on. */
  day: string;
  /** HMAC-SHA256(the day's key, the downloader's address), its first 8 bytes as a signed int8 decimal. */
  digest: string;
  /**
   * Packages (`scope/name`) the download recorder has committed this downloader for: the fold has
   * them, or will, so later batches leave the digest out for them (download-recorder.ts).
   */
  committed?: Set<string>;
}

export interface DownloaderIds {
  /** The downloader behind a client address, today; synchronous once the day's key is at hand. */
  of(address: string): Downloader | Promise<Downloader>;
}

/** Addresses whose digest is kept per process, the least recently used dropped past this. */
const MAX_KNOWN = 100_000;
const DAY_MS = 86_400_000;

interface DayState {
  epochDay: number;
  day: string;
  /** A KeyObject: createHmac with a Buffer key set the key up again on every call (4x the cost). */
  key: KeyObject;
  known: LRUCache<string, Downloader>;
}

/**
 * Digests of client addresses under a key that is random per UTC day, shared by every API process
 * through download_day_keys (the flusher makes it the day before; a process that finds none makes it)
 * and deleted by the flusher once the day is over: a downloader's digests of two days cannot be linked, and no address
 * can be recovered (an IPv4 address could be found by trying them all only while its day's key lives).
 * `now` is the clock the day is read from (tests move it).
 */
export function createDownloaderIds(db: Db, now: () => number = Date.now): DownloaderIds {
  let current: DayState | undefined;
  let loading: { epochDay: number; state: Promise<DayState> } | undefined;

  const load = (epochDay: number): Promise<DayState> => {
    if (loading?.epochDay === epochDay) return loading.state;
    const day = new Date(epochDay * DAY_MS).toISOString().slice(0, 10);
    const state = dayKey(db, day, randomBytes(32)).then((key) => {
      const loaded: DayState = {
        epochDay,
        day,
        key: createSecretKey(key),
        known: new LRUCache({ max: MAX_KNOWN }),
      };
      // A slower load of an earlier day must not replace a later one.
      if (!current || current.epochDay <= epochDay) current = loaded;
      return loaded;
    });
    loading = { epochDay, state };
    // A failed load (PostgreSQL away) is tried again by the next call, not kept.
    state.catch(() => {
      if (loading?.state === state) loading = undefined;
    });
    return state;
  };

  const lookup = (state: DayState, address: string): Downloader => {
    const known = state.known.get(address);
    if (known) return known;
    const mac = createHmac('sha256', state.key).update(downloaderAddress(address)).digest();
    const downloader = { day: state.day, digest: mac.readBigInt64BE(0).toString() };
    state.known.set(address, downloader);
    return downloader;
  };

  // Today's key is read as the process starts, not by its first track call.
  void load(Math.floor(now() / DAY_MS));

  return {
    of(address) {
      const epochDay = Math.floor(now() / DAY_MS);
      if (current?.epochDay === epochDay) return lookup(current, address);
      return load(epochDay).then((state) => lookup(state, address));
    },
  };
}
