import { filtersOf, SearchQuerySchema } from '@pkgreg/contracts';
import type { Db } from '@pkgreg/db';
import { Router } from 'express';
import { parseQuery } from '../http/validate.js';
import { searchPackages } from './search.service.js';
import { DEFAULT_SEARCH_PLAN } from './search-planner.js';

export function searchRoutes(deps: { db: Db }): Router {
  const router = Router();
  router.get('/api/search', async (req, res) => {
    const query = parseQuery(SearchQuerySchema, req.query);
    res.json(await searchPackages(deps.db, query.q, DEFAULT_SEARCH_PLAN, filtersOf(query)));
  });
  return router;
}
