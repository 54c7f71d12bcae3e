import type { FeedQuery, FeedResponse, FeedStatus, PackageFeedItem } from '@pkgreg/contracts';
import type { Db } from '@pkgreg/db';
import { badRequest } from '../http/api-error.js';
import {
  FEED_START,
  type FeedPosition,
  type FeedRow,
  feedHorizon,
  feedStartSince,
  readFeed,
} from './feed.repository.js';

// The sync feed (issue 20; docs/decisions.md, "Registry: discovery"): GET /api/packages with `cursor`,
// `limit` or `updatedSince`. Mirrors follow `nextCursor` for ever; asking again with the last one later
// returns what changed since, delisted, quarantined and removed packages included.

const CURSOR_VERSION = 'f1';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const INVALID_CURSOR = 'cursor must be the nextCursor of an earlier answer';

/** Opaque to clients: a version, the transaction id and the package id, base64url. */
export function encodeCursor(position: FeedPosition): string {
  return Buffer.from(`${CURSOR_VERSION}:${position.xid}:${position.id}`, 'utf8').toString('base64url');
}

export function decodeCursor(cursor: string): FeedPosition {
  const [version, xid, id, extra] = Buffer.from(cursor, 'base64url').toString('utf8').split(':');
  if (
    version !== CURSOR_VERSION ||
    extra !== undefined ||
    !xid ||
    !/^\d{1,20}$/.test(xid) ||
    !id ||
    !UUID.test(id)
  ) {
    throw badRequest(INVALID_CURSOR);
  }
  return { xid, id };
}

function statusOf(row: FeedRow): FeedStatus {
  if (row.removed) return 'removed';
  if (row.quarantined) return 'quarantined';
  return row.status;
}

/**
 * A package that turned private, as mirrors see it: removed (they drop it, as after an operator's
 * removal), with nothing of it beyond what they held already (its id, scope and name) and the time of
 * the change. Its description, tags and the rest may have changed since it went private.
 */
function toPrivateFeedItem(row: FeedRow): PackageFeedItem {
  return {
    id: row.id,
    scope: row.scope,
    name: row.name,
    description: '',
    kind: 'skill',
    category: null,
    tags: [],
    compatibility: [],
    sourceRepo: '',
    repoOwner: '',
    repoStars: 0,
    license: '',
    verified: false,
    version: null,
    risk: null,
    status: 'removed',
    lastIndexedAt: row.updated_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

function toFeedItem(row: FeedRow): PackageFeedItem {
  if (row.private) return toPrivateFeedItem(row);
  return {
    id: row.id,
    scope: row.scope,
    name: row.name,
    description: row.description,
    kind: row.kind,
    category: row.category,
    tags: row.tags,
    compatibility: row.compatibility,
    sourceRepo: row.source_repo,
    repoOwner: row.repo_owner,
    repoStars: row.repo_stars,
    license: row.license ?? '',
    verified: row.verified,
    version: row.version,
    risk: row.risk,
    status: statusOf(row),
    lastIndexedAt: row.last_indexed_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

export async function readPackageFeed(db: Db, query: FeedQuery): Promise<FeedResponse> {
  let after: FeedPosition;
  if (query.cursor) after = decodeCursor(query.cursor);
  else if (query.updatedSince) {
    const start = await feedStartSince(db, query.updatedSince);
    // Nothing changed since then: the feed's end, so that the cursor finds the next change.
    if (!start) return { data: [], nextCursor: encodeCursor(await feedHorizon(db)), limit: query.limit };
    after = start;
  } else after = FEED_START;
  const rows = await readFeed(db, after, query.limit);
  const last = rows.at(-1);
  const next = last ? { xid: last.xid, id: last.id } : after;
  return { data: rows.map(toFeedItem), nextCursor: encodeCursor(next), limit: query.limit };
}
