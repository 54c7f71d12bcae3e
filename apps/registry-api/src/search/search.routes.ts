import { SearchQuerySchema } from '@pkgreg/contracts';
import type { Db } from '@pkgreg/db';
import { Router } from 'express';
import { parseQuery } from '../http/validate.js';
import { searchPackages } from './search.service.js';

export function searchRoutes(deps: { db: Db }): Router {
  const router = Router();
  router.get('/api/search', async (req, res) => {
    const { q } = parseQuery(SearchQuerySchema, req.query);
    res.json(await searchPackages(deps.db, q));
  });
  return router;
}
