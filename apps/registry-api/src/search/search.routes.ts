import { filtersOf, SearchQuerySchema } from '@pkgreg/contracts';
import type { Db } from '@pkgreg/db';
import type { ReadAccessOf } from '../accounts/read-access-of.js';
import type { CachePolicy } from '../http/cache-policy.js';
import { answerIfNotModified } from '../http/etag.js';
import { parseQuery } from '../http/validate.js';
import type { CatalogValidator } from '../packages/catalog-validator.js';
import type { RegistryHandlers } from '../routes/route-table.js';
import { searchPackages } from './search.service.js';
import { DEFAULT_SEARCH_PLAN } from './search-planner.js';

export function searchRoutes(deps: {
  db: Db;
  catalog: CatalogValidator;
  caching: CachePolicy;
  readAccess: ReadAccessOf;
}): Pick<RegistryHandlers, 'search'> {
  return {
    search: async (req, res) => {
      const query = parseQuery(SearchQuerySchema, req.query);
      const access = await deps.readAccess(req);
      const etag = await deps.catalog.etag(access, `search ${JSON.stringify(query)}`);
      if (answerIfNotModified(req, res, { etag, cacheControl: deps.caching.moving })) return;
      res.json(await searchPackages(deps.db, query.q, DEFAULT_SEARCH_PLAN, filtersOf(query), access));
    },
  };
}
