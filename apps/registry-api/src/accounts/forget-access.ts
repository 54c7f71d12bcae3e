import type { RequestHandler } from 'express';
import onHeaders from 'on-headers';
import type { AccessCache } from './access-cache.js';

const READS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * A write this process answers successfully may have changed who reaches what (a revoked token, a
 * removed member, a scope moved): the access cache is dropped as its response's headers go out, after
 * its transaction committed and before its writer can send another request. Other processes hear of
 * it from the database's notification (access-cache.ts). Writes are rare next to reads, so every
 * successful one drops everything rather than each route naming what it changed.
 */
export function forgetAccessOnWrites(cache: AccessCache): RequestHandler {
  return (req, res, next) => {
    if (!READS.has(req.method)) {
      onHeaders(res, () => {
        if (res.statusCode < 400) cache.forget();
      });
    }
    next();
  };
}
