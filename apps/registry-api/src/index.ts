import { createDb } from '@pkgreg/db';
import { closeServer, createLogger, listen, onShutdown } from '@pkgreg/server-kit';
import { Redis } from 'ioredis';
import { createApp } from './app.js';
import { loadEnv } from './env.js';

const env = loadEnv();
const logger = createLogger('registry-api', env.LOG_LEVEL);
const db = createDb(env.DATABASE_URL, { applicationName: 'pkgreg-registry-api' });
const redis = new Redis(env.REDIS_URL, { lazyConnect: false });
redis.on('error', (error) => logger.warn({ err: error }, 'redis error'));

const server = await listen(createApp({ db, redis, logger, env }), env.REGISTRY_PORT, env.REGISTRY_HOST);
logger.info({ url: `http://${env.REGISTRY_HOST}:${env.REGISTRY_PORT}` }, 'registry-api listening');

onShutdown(logger, async () => {
  await closeServer(server);
  await Promise.allSettled([db.destroy(), redis.quit()]);
});
