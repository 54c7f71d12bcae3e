import { createDb } from '@pkgreg/db';
import { closeServer, createLogger, listen, onShutdown } from '@pkgreg/server-kit';
import { Redis } from 'ioredis';
import { createApp } from './app.js';
import { loadEnv } from './env.js';

const env = loadEnv();
const logger = createLogger('mcp-edge', env.LOG_LEVEL);
const db = createDb(env.DATABASE_URL, { applicationName: 'pkgreg-mcp-edge' });
const redis = new Redis(env.REDIS_URL, { lazyConnect: false });
redis.on('error', (error) => logger.warn({ err: error }, 'redis error'));

const server = await listen(createApp({ db, redis, logger, env }), env.EDGE_PORT, env.EDGE_HOST);
logger.info({ url: `http://${env.EDGE_HOST}:${env.EDGE_PORT}` }, 'mcp-edge listening');

onShutdown(logger, async () => {
  await closeServer(server);
  await Promise.allSettled([db.destroy(), redis.quit()]);
});
