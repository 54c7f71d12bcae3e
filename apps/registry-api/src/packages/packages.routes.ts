import { ListQuerySchema } from '@pkgreg/contracts';
import type { Db } from '@pkgreg/db';
import { type Request, type Response, Router } from 'express';
import { etagFor, matchesIfNoneMatch } from '../http/etag.js';
import { parseQuery } from '../http/validate.js';
import { createPackageCache } from './package-cache.js';
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

function sendVersioned(req: Request, res: Response, etag: string, cacheControl: string, send: () => void) {
  res.setHeader('ETag', etag);
  res.setHeader('Cache-Control', cacheControl);
  if (matchesIfNoneMatch(req, etag)) {
    res.status(304).end();
    return;
  }
  send();
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
    sendVersioned(req, res, etagFor(pkg.version, 'json'), DETAIL_CACHE_CONTROL, () => {
      res.type('application/json; charset=utf-8').send(pkg.detailJson);
    });
  });

  router.get('/api/packages/:scope/:name/skill-md', async (req, res) => {
    const pkg = await cache.get(packageKeyFromParams(req.params));
    sendVersioned(req, res, etagFor(pkg.version, 'md'), SKILL_MD_CACHE_CONTROL, () => {
      res.type('text/markdown; charset=utf-8').send(pkg.skillMd);
    });
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
