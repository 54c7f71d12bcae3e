import { FEED_PARAMETERS, FeedQuerySchema, FILTER_NAMES, ListQuerySchema } from '@pkgreg/contracts';
import type { Db } from '@pkgreg/db';
import { Router } from 'express';
import { badRequest } from '../http/api-error.js';
import { parseQuery } from '../http/validate.js';
import { readPackageFeed } from './feed.service.js';
import { listPackages } from './list.service.js';
import { packageKeyFromParams } from './package-path.js';
import { getSourceUrl } from './packages.service.js';

export interface PackagesRoutesDeps {
  db: Db;
  /** Web base URL of the code host, for the source redirect. */
  codeHostWebUrl: string;
}

/** Parameters of the paged list that the feed refuses. */
const LIST_ONLY = ['page', 'pageSize', 'sort', 'order', ...FILTER_NAMES] as const;

export function packagesRoutes(deps: PackagesRoutesDeps): Router {
  const { db } = deps;
  const router = Router();

  router.get('/api/packages', async (req, res) => {
    const given = Object.keys(req.query as Record<string, unknown>);
    if (given.some((name) => (FEED_PARAMETERS as readonly string[]).includes(name))) {
      // The sync feed: every package in the order of its last change, its own paging, no sort or filter.
      const conflict = given.find((name) => (LIST_ONLY as readonly string[]).includes(name));
      if (conflict) throw badRequest(`${conflict} cannot be combined with cursor, limit or updatedSince`);
      res.json(await readPackageFeed(db, parseQuery(FeedQuerySchema, req.query)));
      return;
    }
    res.json(await listPackages(db, parseQuery(ListQuerySchema, req.query)));
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
