import type { Db } from '@pkgreg/db';
import { publishedKeys } from '@pkgreg/registry';
import type { CachePolicy } from '../http/cache-policy.js';
import { answerIfNotModified, JSON_CONTENT_TYPE, strongEtagOf } from '../http/etag.js';
import type { RegistryHandlers } from '../routes/route-table.js';

// GET /api/keys (docs/provenance.md): every public key that ever signed versions, for the CLI and anyone
// verifying a version's signatures. Revalidated like other moving answers: a rotation shows at once.

export function keysRoutes(deps: { db: Db; caching: CachePolicy }): Pick<RegistryHandlers, 'registry-keys'> {
  return {
    'registry-keys': async (req, res) => {
      const body = JSON.stringify({ keys: await publishedKeys(deps.db) });
      if (answerIfNotModified(req, res, { etag: strongEtagOf(body), cacheControl: deps.caching.moving }))
        return;
      res.set('Content-Type', JSON_CONTENT_TYPE);
      res.send(body);
    },
  };
}
