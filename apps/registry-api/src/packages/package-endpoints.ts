import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { INVALID_PACKAGE_PATH_MESSAGE, parsePackagePath, TRACK_NOT_FOUND_MESSAGE } from '@pkgreg/contracts';
import type { Db } from '@pkgreg/db';
import { isPublicOnly, type ReadAccess } from '@pkgreg/registry';
import { type Logger, nameRequest } from '@pkgreg/server-kit';
import express from 'express';
import { hasCredentials, type ViewerOf } from '../accounts/viewer.js';
import type { DownloadRecorder } from '../downloads/download-recorder.js';
import type { Downloader } from '../downloads/downloaders.js';
import { insertPrivateDownload } from '../downloads/downloads.repository.js';
import type { TrackAdmission } from '../downloads/track-admission.js';
import { TRACK_OK, TRACK_OK_LENGTH } from '../downloads/track-response.js';
import { ApiError, badRequest, gone, notFound } from '../http/api-error.js';
import { JSON_BODY_LIMIT, oversizedBody } from '../http/body.js';
import { type CachePolicy, NO_STORE, PRIVATE_NO_STORE } from '../http/cache-policy.js';
import { writeError } from '../http/error-writer.js';
import { DETAIL_CACHE_CONTROL, JSON_CONTENT_TYPE, SKILL_MD_CONTENT_TYPE, sendEncoded } from '../http/etag.js';
import { requestIdFor } from '../http/request-id.js';
import { type RegistryRoute, routeOf } from '../routes/route-table.js';
import type { CachedPackage, PackageCache } from './package-cache.js';
import type { PackageKey } from './package-path.js';

// Detail, skill-md and track: the registry's hottest requests, answered here before Express (as the MCP
// edge answers POST /mcp), each by one path, hit or miss, success or error. Express's app.handle, its
// router walk and our middleware chain cost more CPU than such a request's own work (docs/benchmarks.md,
// Registry). Every other request goes to the Express app.

const PACKAGE_PATH_PREFIX = '/api/packages/';

type Endpoint = 'detail' | 'skill-md' | 'track';

/** Each endpoint's route in the table, which names its requests in metrics and spans. */
const ROUTE_OF: Record<Endpoint, RegistryRoute> = {
  detail: routeOf('detail'),
  'skill-md': routeOf('skill-md'),
  track: routeOf('track'),
};

interface Target {
  endpoint: Endpoint;
  scopeSegment: string;
  name: string;
}

/** `/api/packages/<scope>/<name>[/skill-md|/track][?query]` with the method it answers; else undefined. */
function targetOf(url: string, method: string | undefined): Target | undefined {
  if (!url.startsWith(PACKAGE_PATH_PREFIX)) return undefined;
  const query = url.indexOf('?');
  const path = query < 0 ? url : url.slice(0, query);
  const [scopeSegment = '', name = '', tail, extra] = path.slice(PACKAGE_PATH_PREFIX.length).split('/');
  if (extra !== undefined || scopeSegment === '' || name === '') return undefined;
  const endpoint: Endpoint | undefined =
    tail === undefined ? 'detail' : tail === 'skill-md' ? 'skill-md' : tail === 'track' ? 'track' : undefined;
  if (endpoint === undefined) return undefined;
  const reading = method === 'GET' || method === 'HEAD';
  if (endpoint === 'track' ? method !== 'POST' : !reading) return undefined;
  return { endpoint, scopeSegment, name };
}

/** Percent-decodes a path segment as Express decodes route parameters; a malformed escape is a 400. */
function decodeSegment(segment: string): string {
  if (!segment.includes('%')) return segment;
  try {
    return decodeURIComponent(segment);
  } catch {
    throw badRequest('Bad request');
  }
}

/** The key of `@scope/name` (the `@` may come as `%40`), or a 400 when the path breaks the rule. */
function keyOf(target: Target): PackageKey {
  const scope = decodeSegment(target.scopeSegment);
  const key =
    scope.startsWith('@') || scope.startsWith('%40')
      ? parsePackagePath(scope, decodeSegment(target.name))
      : null;
  if (!key) throw badRequest(INVALID_PACKAGE_PATH_MESSAGE);
  return key;
}

/** A request that carries no body (track takes none; a sent one is still parsed, so bad JSON is a 400). */
function hasNoBody(req: IncomingMessage): boolean {
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] === undefined && (length === undefined || length === '0');
}

export interface PackageEndpointsDeps {
  /** The Express app: every request that is not one of these endpoints. */
  app: RequestListener;
  cache: PackageCache;
  recorder: DownloadRecorder;
  /** Who a track call is from (a unique downloader), and the per-address limit (429). */
  admission: TrackAdmission;
  logger: Logger;
  /** skill-md is a moving answer (docs/caching.md); detail always revalidates. */
  caching: CachePolicy;
  /**
   * Who asks, for requests with credentials (docs/accounts.md): a reader with private access may read
   * private packages. Never called for a request without credentials.
   */
  viewerOf: ViewerOf;
  /** Where a reader's track call of a private package is written (never batched: downloads.repository.ts). */
  db: Db;
}

export function createPackageEndpoints(deps: PackageEndpointsDeps): RequestListener {
  const { app, cache, recorder, admission, logger } = deps;
  const skillMdCacheControl = deps.caching.moving;
  const parseJson = express.json({ limit: JSON_BODY_LIMIT });

  const fail = (req: IncomingMessage, res: ServerResponse, requestId: string, error: unknown) => {
    if (!res.headersSent) res.setHeader('X-Request-Id', requestId);
    const path = (req.url ?? '').split('?')[0] ?? '';
    writeError(res, error, { logger, requestId, method: req.method, path });
  };

  const send = (
    req: IncomingMessage,
    res: ServerResponse,
    endpoint: Endpoint,
    pkg: CachedPackage,
    id: string,
    cacheControl: { detail: string; skillMd: string },
  ) => {
    if (endpoint === 'detail')
      return sendEncoded(req, res, pkg.detail, JSON_CONTENT_TYPE, cacheControl.detail, id);
    if ('gone' in pkg.skillMd) return fail(req, res, id, gone(pkg.skillMd.gone));
    sendEncoded(req, res, pkg.skillMd, SKILL_MD_CONTENT_TYPE, cacheControl.skillMd, id);
  };

  const publicCaching = { detail: DETAIL_CACHE_CONTROL, skillMd: skillMdCacheControl };
  const privateCaching = { detail: PRIVATE_NO_STORE, skillMd: PRIVATE_NO_STORE };

  /** A request without credentials: the cache as before, no viewer resolved (nothing allocated for it). */
  const readAnonymously = (
    req: IncomingMessage,
    res: ServerResponse,
    endpoint: Endpoint,
    key: PackageKey,
    id: string,
  ) => {
    // A hit costs one Map lookup; a miss reads (and caches) the package, or answers its 404 (a private
    // package is never cached: its miss is a missing package's miss).
    const hit = cache.peek(`${key.scope}/${key.name}`);
    if (hit) return send(req, res, endpoint, hit, id, publicCaching);
    cache.get(key).then(
      (pkg) => send(req, res, endpoint, pkg, id, publicCaching),
      (error: unknown) => fail(req, res, id, error),
    );
  };

  /**
   * A request with credentials: answered `private, no-store` whoever it is. The cache (public packages
   * as anyone sees them) answers unless the reader has private access and the package's detail hides
   * dependencies from outsiders; a package the cache has not found (missing, or private) is read with
   * the reader's access, so a private one reaches who may read it and a missing one is the same 404.
   */
  const readAs = (
    req: IncomingMessage,
    res: ServerResponse,
    endpoint: Endpoint,
    key: PackageKey,
    id: string,
    access: ReadAccess,
  ) => {
    const everyone = isPublicOnly(access);
    const own = () =>
      cache.readFor(key, access).then(
        (pkg) => send(req, res, endpoint, pkg, id, privateCaching),
        (error: unknown) => fail(req, res, id, error),
      );
    const answer = (pkg: CachedPackage) =>
      everyone || !pkg.hidesDependencies ? send(req, res, endpoint, pkg, id, privateCaching) : own();
    const hit = cache.peek(`${key.scope}/${key.name}`);
    if (hit) return answer(hit);
    cache
      .get(key)
      .then(answer, (error: unknown) =>
        !everyone && error instanceof ApiError && error.code === 'not_found'
          ? own()
          : fail(req, res, id, error),
      );
  };

  const read = (
    req: IncomingMessage,
    res: ServerResponse,
    endpoint: Endpoint,
    key: PackageKey,
    id: string,
  ) => {
    if (!hasCredentials(req)) return readAnonymously(req, res, endpoint, key, id);
    deps.viewerOf(req).then(
      (viewer) => readAs(req, res, endpoint, key, id, viewer.read),
      (error: unknown) => fail(req, res, id, error),
    );
  };

  const track = (req: IncomingMessage, res: ServerResponse, key: PackageKey, id: string) => {
    // Who the call is from, and whether that address may count one more (a 429 records nothing).
    let admitted: ReturnType<TrackAdmission['admit']>;
    try {
      admitted = admission.admit(req);
    } catch (error) {
      return fail(req, res, id, error);
    }
    // A reader with private access may track a private package: written on its own when it is one; a
    // public (or unknown) package goes through the batches like anyone's call.
    const record = (downloader: Downloader | undefined): Promise<boolean> => {
      if (!hasCredentials(req)) return recorder.record(key.scope, key.name, downloader);
      return deps.viewerOf(req).then(async (viewer) => {
        if (
          !isPublicOnly(viewer.read) &&
          (await insertPrivateDownload(deps.db, key, viewer.read, downloader))
        )
          return true;
        return recorder.record(key.scope, key.name, downloader);
      });
    };
    (admitted instanceof Promise ? admitted.then(record) : record(admitted)).then(
      (counted) => {
        // registry-api.md: track's 404 body is `Not found` (not detail's `Package not found`).
        if (!counted) return fail(req, res, id, notFound(TRACK_NOT_FOUND_MESSAGE));
        res.writeHead(200, {
          'X-Request-Id': id,
          'Cache-Control': NO_STORE,
          'Content-Type': JSON_CONTENT_TYPE,
          'Content-Length': TRACK_OK_LENGTH,
        });
        res.end(TRACK_OK);
      },
      (error: unknown) => fail(req, res, id, error),
    );
  };

  return (req, res) => {
    const target = targetOf(req.url ?? '', req.method);
    if (!target) return app(req, res);
    nameRequest(req, ROUTE_OF[target.endpoint]);
    const id = requestIdFor(req.headers['x-request-id']);
    let key: PackageKey;
    try {
      key = keyOf(target);
    } catch (error) {
      return fail(req, res, id, error);
    }
    // Each answer carries the id in its writeHead, with its other headers (an error's, in fail).
    if (target.endpoint !== 'track') return read(req, res, target.endpoint, key, id);
    if (hasNoBody(req)) return track(req, res, key, id);
    const oversized = oversizedBody(req, res);
    if (oversized) return fail(req, res, id, oversized);
    parseJson(req as express.Request, res as express.Response, (error?: unknown) =>
      error ? fail(req, res, id, error) : track(req, res, key, id),
    );
  };
}
