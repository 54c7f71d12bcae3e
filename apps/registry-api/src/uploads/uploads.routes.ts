import { type UploadQuery, UploadQuerySchema } from '@pkgreg/contracts';
import express, { type RequestHandler } from 'express';
import { oversizedBody } from '../http/body.js';
import { requestIdOf } from '../http/request-id.js';
import { parseQuery } from '../http/validate.js';
import type { WindowLimiter } from '../http/window-limiter.js';
import { packageKeyFromParams } from '../packages/package-path.js';
import { takeLimit } from '../publishing/publishing.service.js';
import type { RegistryHandlers } from '../routes/route-table.js';
import {
  authorizeUpload,
  storeUpload,
  type UploadDeps,
  type Uploader,
  uploadVersion,
} from './uploads.service.js';

// PUT /api/packages/@scope/name/versions/{version}: a tar.gz of one skill folder (docs/publishing.md,
// "Uploading (hosted packages)"). The path and the credentials are checked before a byte of the body
// is read; the body is read whole, up to UPLOAD_MAX_BYTES, then checked and stored in one transaction.

export interface UploadRoutesDeps extends UploadDeps {
  /** Counted with publishes and owner actions (PUBLISHES_PER_HOUR), per client address. */
  limiter: WindowLimiter;
  maxBytes: number;
}

export function uploadsRoutes(deps: UploadRoutesDeps): Pick<RegistryHandlers, 'version-upload'> {
  const authorize: RequestHandler = async (req, res, next) => {
    const key = packageKeyFromParams(req.params as Record<string, string>);
    uploadVersion(String(req.params.version ?? ''));
    res.locals.query = parseQuery(UploadQuerySchema, req.query);
    await takeLimit(
      deps.limiter,
      req.ip ?? req.socket.remoteAddress ?? 'unknown',
      'Too many uploads from this address',
    );
    res.locals.uploader = await authorizeUpload(deps, req, key);
    next();
  };
  const store: RequestHandler = async (req, res) => {
    const key = packageKeyFromParams(req.params as Record<string, string>);
    const version = uploadVersion(String(req.params.version ?? ''));
    const body = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
    const result = await storeUpload(
      deps,
      res.locals.uploader as Uploader,
      key,
      version,
      body,
      requestIdOf(res),
      (res.locals.query as UploadQuery).sourcePath,
    );
    res.status(201).json(result);
  };
  return {
    'version-upload': [
      authorize,
      (req, res, next) => next(oversizedBody(req, res, deps.maxBytes)),
      express.raw({ type: () => true, limit: deps.maxBytes }),
      store,
    ],
  };
}
