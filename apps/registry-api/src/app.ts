import type { Db } from '@pkgreg/db';
import { healthRoutes, type Logger } from '@pkgreg/server-kit';
import express, { type Express } from 'express';
import type { Redis } from 'ioredis';
import { createDownloadRecorder, type DownloadRecorder } from './downloads/download-recorder.js';
import { downloadsRoutes } from './downloads/downloads.routes.js';
import type { Env } from './env.js';
import { errorHandler, notFoundHandler } from './http/error-handler.js';
import { requestId } from './http/request-id.js';
import { openApiRoutes } from './openapi/openapi.routes.js';
import { packagesRoutes } from './packages/packages.routes.js';
import { searchRoutes } from './search/search.routes.js';
import { webStatic } from './web-static.js';

export interface AppDeps {
  db: Db;
  redis: Redis;
  logger: Logger;
  env: Env;
  /** Group-commit writer for track calls; one per process (created here when not given). */
  recorder?: DownloadRecorder;
}

/** Builds the registry's Express app; never listens (tests drive it with supertest). */
export function createApp(deps: AppDeps): Express {
  const app = express();
  app.disable('x-powered-by');
  // ETags come from row_version (packages.routes.ts), never from hashing the body.
  app.set('etag', false);
  app.set('trust proxy', 'loopback');
  app.use(requestId());
  // The package routes (detail and skill-md are the hottest) come first, so a request does not walk
  // the health, body-parser and openapi layers before reaching them. They are GET-only and read no
  // body: a GET's body has no meaning (RFC 9110) and is left unparsed.
  app.use(
    packagesRoutes({
      db: deps.db,
      codeHostWebUrl: deps.env.GITHUB_WEB_URL,
      detailCacheTtlMs: deps.env.DETAIL_CACHE_TTL_MS,
    }),
  );
  app.use(healthRoutes({ db: deps.db, redis: deps.redis }));
  // No endpoint takes a body, but a malformed one (say on track) must still be a 400, never a 5xx.
  app.use(express.json({ limit: '16kb' }));
  app.use(openApiRoutes());
  app.use(downloadsRoutes({ recorder: deps.recorder ?? createDownloadRecorder(deps.db) }));
  app.use(searchRoutes({ db: deps.db }));
  // The built web UI (apps/web/dist) and its SPA fallback, after every API route (web-static.ts).
  app.use(webStatic());
  app.use(notFoundHandler());
  app.use(errorHandler(deps.logger));
  return app;
}
