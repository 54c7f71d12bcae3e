import { ListQuerySchema } from '@pkgreg/contracts';
import type { Db } from '@pkgreg/db';
import { type Request, type Response, Router } from 'express';
import { matchesIfNoneMatch } from '../http/etag.js';
import { parseQuery } from '../http/validate.js';
import { createPackageCache, type EncodedBody } from './package-cache.js';
import { packageKeyFromParams } from './package-path.js';
import { getSourceUrl, listPackages } from './packages.service.js';

export interface PackagesRoutesDeps {
  db: Db;
  /** Web base URL of the code host, for the source redirect. */
  codeHostWebUrl: string;
  /** Detail/skill-md micro-cache lifetime (0 = off). */
  detailCacheTtlMs: number;
}

// Detail carries downloadCount, which moves every flush: clients revalidate each time (a cheap 304).
const DETAIL_CACHE_CONTROL = 'public, max-age=0, must-revalidate';
// SKILL.md changes only on re-indexing: a minute of caching is harmless and saves the round trip.
const SKILL_MD_CACHE_CONTROL = 'public, max-age=60, must-revalidate';

/**
 * Writes a cached representation straight to node's response: ETag and Content-Length come with the
 * cache entry, so nothing is hashed, serialized or measured per request (res.type()/res.send() cost a
 * mime lookup, a charset rewrite and a Buffer.byteLength each time, measurable on the hottest route).
 */
function sendVersioned(
  req: Request,
  res: Response,
  body: EncodedBody,
  contentType: string,
  cacheControl: string,
) {
  res.setHeader('ETag', body.etag);
  res.setHeader('Cache-Control', cacheControl);
  if (matchesIfNoneMatch(req, body.etag)) {
    res.statusCode = 304;
    res.end();
    return;
  }
  res.statusCode = 200;
  res.setHeader('Content-Type', contentType);
  res.setHeader('Content-Length', body.length);
  // node drops the body itself for HEAD, keeping Content-Length.
  res.end(body.bytes);
}

export function packagesRoutes(deps: PackagesRoutesDeps): Router {
  const { db } = deps;
  const router = Router();
  const cache = createPackageCache(db, { ttlMs: deps.detailCacheTtlMs });

  router.get('/api/packages', async (req, res) => {
    const query = parseQuery(ListQuerySchema, req.query);
    res.json(await listPackages(db, query));
  });

  router.get('/api/packages/:scope/:name', async (req, res) => {
    const pkg = await cache.get(packageKeyFromParams(req.params));
    sendVersioned(req, res, pkg.detail, 'application/json; charset=utf-8', DETAIL_CACHE_CONTROL);
  });

  router.get('/api/packages/:scope/:name/skill-md', async (req, res) => {
    const pkg = await cache.get(packageKeyFromParams(req.params));
    sendVersioned(req, res, pkg.skillMd, 'text/markdown; charset=utf-8', SKILL_MD_CACHE_CONTROL);
  });

  router.get('/api/packages/:scope/:name/source', async (req, res) => {
    res.redirect(302, await getSourceUrl(db, packageKeyFromParams(req.params), deps.codeHostWebUrl));
  });

  // `/api/packages/@scope` alone is a package path missing its name, not an unknown route.
  router.get('/api/packages/:scope', (req) => {
    packageKeyFromParams({ scope: req.params.scope, name: '' });
  });

  return router;
}
