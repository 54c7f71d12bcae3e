import type { Db } from '@pkgreg/db';
import { sql } from 'kysely';

/** A position in the feed: after the package `id` changed by transaction `xid` (xid8, as text). */
export interface FeedPosition {
  xid: string;
  id: string;
}

/** The feed's first position: before every package. */
export const FEED_START: FeedPosition = { xid: '0', id: '00000000-0000-0000-0000-000000000000' };

export interface FeedRow {
  id: string;
  scope: string;
  name: string;
  description: string;
  kind: 'skill' | 'composite' | 'workflow' | 'app';
  category: string | null;
  tags: string[];
  compatibility: string[];
  source_repo: string;
  repo_owner: string;
  repo_stars: number;
  license: string | null;
  verified: boolean;
  version: string | null;
  risk: 'none' | 'low' | 'medium' | 'high' | null;
  status: 'active' | 'deprecated' | 'delisted';
  removed: boolean;
  quarantined: boolean;
  /** Private now (it was public once: one that never was is not in the feed at all). */
  private: boolean;
  last_indexed_at: Date;
  updated_at: Date;
  xid: string;
}

/**
 * The feed's end: the oldest transaction that may still commit a change to this database (decisions.md,
 * Sync feed). Every transaction running at the snapshot counts (a late committer must never land
 * behind a cursor) except one held by a backend connected to another database: a backend stays in its
 * database, so that one can change no package here, and a long transaction elsewhere in the cluster
 * does not hold the feed back. One that ended since the snapshot, or whose backend is not known (a
 * standby's, a prepared one), still counts: it can only hold the end back, never skip a change.
 */
const FEED_END = sql<string>`(
  select coalesce(
    (select min(x) from pg_snapshot_xip(s) x
      where not exists (select 1 from pg_stat_activity a
        where a.backend_xid = x::xid and a.datname <> current_database())),
    pg_snapshot_xmax(s))
  from pg_current_snapshot() s)`;

/**
 * Up to `limit` packages after `after` in the order of their last change (updated_xid, id), every
 * status included. The feed is for anonymous mirrors: a private package is in it only if it was public
 * once (to tell mirrors it is gone, feed.service.ts); one private from its first row never shows. Only changes below the feed's end are served: a transaction that commits later
 * holds an xid at least that old, so its changes always come after a position already handed out.
 */
export async function readFeed(db: Db, after: FeedPosition, limit: number): Promise<FeedRow[]> {
  const result = await sql<FeedRow>`
    select p.id, p.scope, p.name, p.description, p.kind, p.category, p.tags, p.compatibility, p.source_repo,
      p.repo_owner, p.repo_stars, p.license, p.verified, p.version, p.risk, p.status,
      p.removed_at is not null as removed, p.quarantined_at is not null as quarantined, p.private, p.last_indexed_at,
      p.updated_at, p.updated_xid::text as xid
    from packages p
    where (p.updated_xid, p.id) > (${after.xid}::xid8, ${after.id}::uuid)
      and p.updated_xid < ${FEED_END}
      and (not p.private or p.was_public)
    order by p.updated_xid, p.id
    limit ${limit}`.execute(db);
  return result.rows;
}

/**
 * Where a walk for "changed at or after `since`" starts: just before the oldest transaction among the
 * packages changed since then (null when none has). Its cost follows the packages changed since.
 */
export async function feedStartSince(db: Db, since: string): Promise<FeedPosition | null> {
  const result = await sql<{ xid: string | null }>`
    select min(updated_xid)::text as xid from packages where updated_at >= ${since}::timestamptz`.execute(db);
  const xid = result.rows[0]?.xid;
  return xid ? { xid, id: FEED_START.id } : null;
}

/** The position after everything served so far: the feed's end, minus one row. */
export async function feedHorizon(db: Db): Promise<FeedPosition> {
  const result = await sql<{ xid: string }>`
    select (${FEED_END}::text::numeric - 1)::text as xid`.execute(db);
  return { xid: result.rows[0]?.xid ?? '0', id: 'ffffffff-ffff-ffff-ffff-ffffffffffff' };
}
