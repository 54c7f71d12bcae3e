import { createDb } from '@pkgreg/db';
import { createLogger, onShutdown } from '@pkgreg/server-kit';
import { loadEnv } from './env.js';

const env = loadEnv();
const logger = createLogger('runtime-worker', env.LOG_LEVEL);
const db = createDb(env.DATABASE_URL, { applicationName: 'pkgreg-runtime-worker' });
logger.info({ concurrency: env.WORKER_CONCURRENCY }, 'runtime-worker started');

onShutdown(logger, async () => {
  await db.destroy();
});
