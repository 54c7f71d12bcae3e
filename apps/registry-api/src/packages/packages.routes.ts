import { ListQuerySchema } from '@pkgreg/contracts';
import type { Db } from '@pkgreg/db';
import { Router } from 'express';
import {
  DETAIL_CACHE_CONTROL,
  JSON_CONTENT_TYPE,
  SKILL_MD_CACHE_CONTROL,
  SKILL_MD_CONTENT_TYPE,
  sendEncoded,
} from '../http/etag.js';
import { parseQuery } from '../http/validate.js';
import type { PackageCache } from './package-cache.js';
import { packageKeyFromParams } from './package-path.js';
import { getSourceUrl, listPackages } from './packages.service.js';

export interface PackagesRoutesDeps {
  db: Db;
  /** Web base URL of the code host, for the source redirect. */
  codeHostWebUrl: string;
  /** Detail/skill-md micro-cache, shared with the request listener's fast lane (http/fast-lane.ts). */
  cache: PackageCache;
}

export function packagesRoutes(deps: PackagesRoutesDeps): Router {
  const { db, cache } = deps;
  const router = Router();

  router.get('/api/packages', async (req, res) => {
    const query = parseQuery(ListQuerySchema, req.query);
    res.json(await listPackages(db, query));
  });

  router.get('/api/packages/:scope/:name', async (req, res) => {
    const pkg = await cache.get(packageKeyFromParams(req.params));
    sendEncoded(req, res, pkg.detail, JSON_CONTENT_TYPE, DETAIL_CACHE_CONTROL);
  });

  router.get('/api/packages/:scope/:name/skill-md', async (req, res) => {
    const pkg = await cache.get(packageKeyFromParams(req.params));
    sendEncoded(req, res, pkg.skillMd, SKILL_MD_CONTENT_TYPE, SKILL_MD_CACHE_CONTROL);
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
