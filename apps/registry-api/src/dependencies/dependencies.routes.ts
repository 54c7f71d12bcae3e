import { DependantsQuerySchema, PACKAGE_NOT_FOUND_MESSAGE } from '@pkgreg/contracts';
import type { Db } from '@pkgreg/db';
import { listDependants } from '@pkgreg/registry';
import { notFound } from '../http/api-error.js';
import type { CachePolicy } from '../http/cache-policy.js';
import { answerIfNotModified } from '../http/etag.js';
import { parseQuery } from '../http/validate.js';
import type { CatalogValidator } from '../packages/catalog-validator.js';
import { packageKeyFromParams } from '../packages/package-path.js';
import type { RegistryHandlers } from '../routes/route-table.js';

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
      const page = await listDependants(db, key, query);
      if (!page) throw notFound(PACKAGE_NOT_FOUND_MESSAGE);
      res.json(page);
    },
  };
}
