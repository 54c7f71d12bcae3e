import { DependantsQuerySchema } from '@pkgreg/contracts';
import type { Db } from '@pkgreg/db';
import type { CachePolicy } from '../http/cache-policy.js';
import { answerIfNotModified } from '../http/etag.js';
import { parseQuery } from '../http/validate.js';
import type { CatalogValidator } from '../packages/catalog-validator.js';
import { packageKeyFromParams } from '../packages/package-path.js';
import type { RegistryHandlers } from '../routes/route-table.js';
import { listDependants } from './dependencies.service.js';

export interface DependenciesRoutesDeps {
  db: Db;
  catalog: CatalogValidator;
  caching: CachePolicy;
}

// A package's dependencies are in its detail (and each version's); its dependants are paged here.
export function dependenciesRoutes(deps: DependenciesRoutesDeps): Pick<RegistryHandlers, 'dependants'> {
  const { db, catalog, caching } = deps;
  return {
    dependants: async (req, res) => {
      const key = packageKeyFromParams(req.params);
      const query = parseQuery(DependantsQuerySchema, req.query);
      // The page moves with other packages' indexing runs: the catalog's mark covers them all.
      const etag = await catalog.etag(`dependants ${key.scope}/${key.name} ${JSON.stringify(query)}`);
      if (answerIfNotModified(req, res, { etag, cacheControl: caching.moving })) return;
      res.json(await listDependants(db, key, query));
    },
  };
}
