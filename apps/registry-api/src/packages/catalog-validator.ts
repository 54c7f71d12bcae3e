import type { Db } from '@pkgreg/db';
import { isPublicOnly, type ReadAccess } from '@pkgreg/registry';
import { weakEtagOf } from '../http/etag.js';
import { readCatalogMark } from './packages.repository.js';

// ETags for list, search, the feed and dependants without reading their answers: a 304 costs one small
// query (or none within the TTL), not the page's. The mark (readCatalogMark) is made of:
// - the newest package change (max updated_xid; the trigger sets it on every change but download
//   counts, and yanks and new versions touch their package);
// - this database's transactions still running that are older than it: one may commit a change with a
//   smaller xid later, and its leaving the snapshot moves the mark exactly when its change shows;
// - the derived tables' state (list positions, popularity positions, search tables), written after
//   each rebuild.
// The mark is always read before the answer, so an answer is never older than its ETag; at worst a
// client holds a newer answer under an older ETag and fetches once more. Packages are never deleted
// (delisting and removal are updates), which the mark relies on.
// Two marks: a public-only reader's counts public packages only (a private package's changes must not
// show to outsiders as a moving ETag); a reader with private access gets the mark of every package, and
// its access is part of its ETags (its answers hold its private packages).

export interface CatalogValidator {
  /**
   * The ETag of the answer `parts` name (route, package, parsed query) as `access` sees it, as of now
   * or up to the TTL ago.
   */
  etag(access: ReadAccess, ...parts: string[]): Promise<string>;
}

export function createCatalogValidator(db: Db, options: { ttlMs: number }): CatalogValidator {
  const everyone = markReader(db, options.ttlMs, false);
  const withPrivate = markReader(db, options.ttlMs, true);
  return {
    async etag(access, ...parts) {
      if (isPublicOnly(access)) return weakEtagOf(await everyone(), ...parts);
      return weakEtagOf(await withPrivate(), ...parts, JSON.stringify(access));
    },
  };
}

/** One mark, read at most once per TTL however many requests ask. */
function markReader(db: Db, ttlMs: number, privateToo: boolean): () => Promise<string> {
  let current: { mark: Promise<string>; readAt: number } | undefined;
  let reading: Promise<string> | undefined;

  const read = (): Promise<string> => {
    // A read already under way started before this request's answer is read: its mark is old enough.
    if (reading) return reading;
    const startedAt = Date.now();
    const mark = readCatalogMark(db, { privateToo });
    reading = mark;
    mark.then(
      () => {
        current = { mark, readAt: startedAt };
      },
      () => {},
    );
    mark
      .finally(() => {
        if (reading === mark) reading = undefined;
      })
      .catch(() => {});
    return mark;
  };

  return () => (current && Date.now() - current.readAt < ttlMs ? current.mark : read());
}
