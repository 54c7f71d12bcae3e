import type { CachePolicy } from '../http/cache-policy.js';
import { answerIfNotModified, JSON_CONTENT_TYPE, strongEtagOf } from '../http/etag.js';
import type { RegistryHandlers } from '../routes/route-table.js';
import { buildOpenApiDocument } from './openapi.js';

export function openApiRoutes(deps: { caching: CachePolicy }): Pick<RegistryHandlers, 'openapi'> {
  // Built once: the contracts do not change at run time, so neither do the bytes or their ETag.
  const body = JSON.stringify(buildOpenApiDocument());
  const etag = strongEtagOf(body);
  return {
    openapi: (req, res) => {
      if (answerIfNotModified(req, res, { etag, cacheControl: deps.caching.moving })) return;
      res.set('Content-Type', JSON_CONTENT_TYPE);
      res.send(body);
    },
  };
}
