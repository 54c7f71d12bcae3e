import type { Db } from '@pkgreg/db';
import { healthRoutes, type Logger } from '@pkgreg/server-kit';
import express, { type Express } from 'express';
import type { Redis } from 'ioredis';
import type { Env } from './env.js';

export interface AppDeps {
  db: Db;
  redis: Redis;
  logger: Logger;
  env: Env;
}

/** Builds the edge's Express app; never listens (tests drive it with supertest). */
export function createApp(deps: AppDeps): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', 'loopback');
  app.use(healthRoutes({ db: deps.db, redis: deps.redis }));
  return app;
}
