import { filtersOf, SearchQuerySchema } from '@pkgreg/contracts';
import type { Db } from '@pkgreg/db';
import { isPublicOnly } from '@pkgreg/registry';
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
      // A reader with private access has ETags of its own: its answers hold its private matches.
      const parts = [`search ${JSON.stringify(query)}`];
      if (!isPublicOnly(access)) parts.push(JSON.stringify(access));
      const etag = await deps.catalog.etag(...parts);
      if (answerIfNotModified(req, res, { etag, cacheControl: deps.caching.moving })) return;
      res.json(await searchPackages(deps.db, query.q, DEFAULT_SEARCH_PLAN, filtersOf(query), access));
    },
  };
}
