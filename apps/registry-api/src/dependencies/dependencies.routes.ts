import { DependantsQuerySchema } from '@pkgreg/contracts';
import type { Db } from '@pkgreg/db';
import { Router } from 'express';
import { parseQuery } from '../http/validate.js';
import { packageKeyFromParams } from '../packages/package-path.js';
import { listDependants } from './dependencies.service.js';

export interface DependenciesRoutesDeps {
  db: Db;
}

// A package's dependencies are in its detail (and each version's); its dependants are paged here.
export function dependenciesRoutes(deps: DependenciesRoutesDeps): Router {
  const { db } = deps;
  const router = Router();

  router.get('/api/packages/:scope/:name/dependants', async (req, res) => {
    const key = packageKeyFromParams(req.params);
    const query = parseQuery(DependantsQuerySchema, req.query);
    // dependantCount moves with other packages' indexing runs, as detail's counters do.
    res.set('Cache-Control', 'public, max-age=0, must-revalidate');
    res.json(await listDependants(db, key, query));
  });

  return router;
}
