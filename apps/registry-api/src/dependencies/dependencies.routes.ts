import { DependantsQuerySchema, PACKAGE_NOT_FOUND_MESSAGE } from '@pkgreg/contracts';
import type { Db } from '@pkgreg/db';
import { listDependants } from '@pkgreg/registry';
import type { ReadAccessOf } from '../accounts/read-access-of.js';
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
  readAccess: ReadAccessOf;
}

// A package's dependencies are in its detail (and each version's); its dependants are paged here.
export function dependenciesRoutes(deps: DependenciesRoutesDeps): Pick<RegistryHandlers, 'dependants'> {
  const { db, catalog, caching, readAccess } = deps;
  return {
    dependants: async (req, res) => {
      const key = packageKeyFromParams(req.params);
      const query = parseQuery(DependantsQuerySchema, req.query);
      const access = await readAccess(req);
      // The page moves with other packages' indexing runs: the catalog's mark covers them all. A 304 is
      // only for a package the reader may see: checked before it, so a private one never answers one.
      const etag = await catalog.etag(access, `dependants ${key.scope}/${key.name} ${JSON.stringify(query)}`);
      const page = await listDependants(db, key, query, access);
      if (!page) throw notFound(PACKAGE_NOT_FOUND_MESSAGE);
      if (answerIfNotModified(req, res, { etag, cacheControl: caching.moving })) return;
      res.json(page);
    },
  };
}
