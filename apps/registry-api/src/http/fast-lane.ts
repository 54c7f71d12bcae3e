import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { parsePackagePath } from '@pkgreg/contracts';
import type { DownloadRecorder } from '../downloads/download-recorder.js';
import {
  TRACK_OK,
  TRACK_OK_LENGTH,
  TRACK_OUTCOME,
  type TrackOutcome,
  type WithTrackOutcome,
} from '../downloads/track-response.js';
import type { PackageCache } from '../packages/package-cache.js';
import {
  DETAIL_CACHE_CONTROL,
  JSON_CONTENT_TYPE,
  SKILL_MD_CACHE_CONTROL,
  SKILL_MD_CONTENT_TYPE,
  sendEncoded,
} from './etag.js';
import { requestIdFor } from './request-id.js';

// The registry's two hottest requests, answered before Express (like mcp-edge's POST /mcp): a detail or
// skill-md whose package is in the micro-cache, and a track call without a body. Express's app.handle,
// its router walk and our middleware chain cost more CPU than such a request's own work (measured in
// docs/benchmarks.md, Registry). Everything else — a miss, an odd path, a query string, a body, a 404,
// an error — goes to the Express app unchanged, which answers it exactly as before: the lane never
// writes an error body of its own (STYLE.md: one error writer).

const PACKAGE_PATH_PREFIX = '/api/packages/';

interface PackagePath {
  scopeSegment: string;
  name: string;
  /** `skill-md`, `track`, another word, or undefined for the package itself. */
  tail: string | undefined;
}

/** Splits `/api/packages/<scope>/<name>[/<tail>]`; undefined for anything else (queries included). */
function splitPackagePath(url: string): PackagePath | undefined {
  if (!url.startsWith(PACKAGE_PATH_PREFIX) || url.includes('?')) return undefined;
  const [scopeSegment = '', name = '', tail, extra] = url.slice(PACKAGE_PATH_PREFIX.length).split('/');
  if (extra !== undefined) return undefined;
  return { scopeSegment, name, tail };
}

/** The scope without its `@` (or `%40`); undefined when the segment is not a scope. */
function scopeOf(segment: string): string | undefined {
  if (segment.startsWith('@')) return segment.slice(1);
  if (segment.startsWith('%40')) return segment.slice(3);
  return undefined;
}

/** A request that carries no body (track takes none; one with a body goes to Express's parser). */
function hasNoBody(req: IncomingMessage): boolean {
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] === undefined && (length === undefined || length === '0');
}

export function createFastLane(deps: {
  app: RequestListener;
  cache: PackageCache;
  recorder: DownloadRecorder;
}): RequestListener {
  const { app, cache, recorder } = deps;

  const serveCached = (req: IncomingMessage, res: ServerResponse, path: PackagePath): boolean => {
    if (path.tail !== undefined && path.tail !== 'skill-md') return false;
    const scope = scopeOf(path.scopeSegment);
    // Only valid scope/name pairs ever enter the cache, so a hit needs no further validation.
    const pkg = scope === undefined ? undefined : cache.peek(`${scope}/${path.name}`);
    if (!pkg) return false;
    res.setHeader('X-Request-Id', requestIdFor(req.headers['x-request-id']));
    if (path.tail === undefined) sendEncoded(req, res, pkg.detail, JSON_CONTENT_TYPE, DETAIL_CACHE_CONTROL);
    else sendEncoded(req, res, pkg.skillMd, SKILL_MD_CONTENT_TYPE, SKILL_MD_CACHE_CONTROL);
    return true;
  };

  const track = (req: IncomingMessage, res: ServerResponse, path: PackagePath): boolean => {
    if (path.tail !== 'track' || !hasNoBody(req)) return false;
    // Not a scoped path, or not a valid one: Express answers the 400.
    const key =
      scopeOf(path.scopeSegment) === undefined ? null : parsePackagePath(path.scopeSegment, path.name);
    if (!key) return false;
    const handOver = (outcome: TrackOutcome) => {
      (req as WithTrackOutcome)[TRACK_OUTCOME] = outcome;
      app(req, res); // Express answers the 404 or the error (and logs it) as it always has
    };
    recorder.record(key.scope, key.name).then(
      (counted) => {
        if (!counted) return handOver({ counted: false });
        res.writeHead(200, {
          'X-Request-Id': requestIdFor(req.headers['x-request-id']),
          'Content-Type': JSON_CONTENT_TYPE,
          'Content-Length': TRACK_OK_LENGTH,
        });
        res.end(TRACK_OK);
      },
      (error: unknown) => handOver({ error }),
    );
    return true;
  };

  return (req, res) => {
    const url = req.url ?? '';
    const path = splitPackagePath(url);
    if (path) {
      const method = req.method;
      if ((method === 'GET' || method === 'HEAD') && serveCached(req, res, path)) return;
      if (method === 'POST' && track(req, res, path)) return;
    }
    app(req, res);
  };
}
