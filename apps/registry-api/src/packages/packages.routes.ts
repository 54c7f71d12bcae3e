import { ListQuerySchema } from '@pkgreg/contracts';
import type { Db } from '@pkgreg/db';
import { Router } from 'express';
import { parseQuery } from '../http/validate.js';
import { packageKeyFromParams } from './package-path.js';
import { getSourceUrl, listPackages } from './packages.service.js';

export interface PackagesRoutesDeps {
  db: Db;
  /** Web base URL of the code host, for the source redirect. */
  codeHostWebUrl: string;
}

export function packagesRoutes(deps: PackagesRoutesDeps): Router {
  const { db } = deps;
  const router = Router();

  router.get('/api/packages', async (req, res) => {
    const query = parseQuery(ListQuerySchema, req.query);
    res.json(await listPackages(db, query));
  });

  // Detail, skill-md and track are answered before Express, by package-endpoints.ts.

  router.get('/api/packages/:scope/:name/source', async (req, res) => {
    res.redirect(302, await getSourceUrl(db, packageKeyFromParams(req.params), deps.codeHostWebUrl));
  });

  // `/api/packages/@scope` alone is a package path missing its name, not an unknown route.
  router.get('/api/packages/:scope', (req) => {
    packageKeyFromParams({ scope: req.params.scope, name: '' });
  });

  return router;
}
