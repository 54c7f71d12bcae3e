import { FEED_PARAMETERS, FeedQuerySchema, FILTER_NAMES, ListQuerySchema } from '@pkgreg/contracts';
import type { Db } from '@pkgreg/db';
import { PUBLIC_ONLY, type ReadAccess } from '@pkgreg/registry';
import type { ReadAccessOf } from '../accounts/read-access-of.js';
import { badRequest } from '../http/api-error.js';
import { type CachePolicy, cacheControlFor, VARY_VIEWER } from '../http/cache-policy.js';
import { answerIfNotModified } from '../http/etag.js';
import { parseQuery } from '../http/validate.js';
import type { RegistryHandlers } from '../routes/route-table.js';
import type { CatalogValidator } from './catalog-validator.js';
import { readPackageFeed } from './feed.service.js';
import { listPackages } from './list.service.js';
import { packageKeyFromParams } from './package-path.js';
import { getSourceUrl } from './packages.service.js';

export interface PackagesRoutesDeps {
  db: Db;
  /** Web base URL of the code host, for the source redirect. */
  codeHostWebUrl: string;
  catalog: CatalogValidator;
  caching: CachePolicy;
  readAccess: ReadAccessOf;
}

/** Parameters of the paged list that the feed refuses. */
const LIST_ONLY = ['page', 'pageSize', 'sort', 'order', ...FILTER_NAMES] as const;

export function packagesRoutes(
  deps: PackagesRoutesDeps,
): Pick<RegistryHandlers, 'list' | 'source' | 'scope-only'> {
  const { db, catalog, caching, readAccess } = deps;
  const listOrFeed: RegistryHandlers['list'] = async (req, res) => {
    const notModified = async (access: ReadAccess, part: string) =>
      answerIfNotModified(req, res, { etag: await catalog.etag(access, part), cacheControl: caching.moving });
    const given = Object.keys(req.query as Record<string, unknown>);
    if (given.some((name) => (FEED_PARAMETERS as readonly string[]).includes(name))) {
      // The sync feed: every package in the order of its last change, its own paging, no sort or filter.
      // It is for anonymous mirrors: the same for everyone, private packages never in it (feed.service.ts).
      const conflict = given.find((name) => (LIST_ONLY as readonly string[]).includes(name));
      if (conflict) throw badRequest(`${conflict} cannot be combined with cursor, limit or updatedSince`);
      const feed = parseQuery(FeedQuerySchema, req.query);
      if (await notModified(PUBLIC_ONLY, `feed ${JSON.stringify(feed)}`)) return;
      res.json(await readPackageFeed(db, feed));
      return;
    }
    const list = parseQuery(ListQuerySchema, req.query);
    const access = await readAccess(req);
    if (await notModified(access, `list ${JSON.stringify(list)}`)) return;
    res.json(await listPackages(db, list, undefined, access));
  };

  // Detail, skill-md and track are answered before Express, by package-endpoints.ts.

  const source: RegistryHandlers['source'] = async (req, res) => {
    // The target moves only with re-indexing; a delisting turns it into a 404 within max-age.
    const key = packageKeyFromParams(req.params);
    const url = await getSourceUrl(db, key, deps.codeHostWebUrl, await readAccess(req));
    res.set('Cache-Control', cacheControlFor(req, caching.moving));
    res.set('Vary', VARY_VIEWER);
    res.redirect(302, url);
  };

  // `/api/packages/@scope` alone is a package path missing its name, not an unknown route.
  const scopeOnly: RegistryHandlers['scope-only'] = (req) => {
    packageKeyFromParams({ scope: req.params.scope, name: '' });
  };

  return { list: listOrFeed, source, 'scope-only': scopeOnly };
}
