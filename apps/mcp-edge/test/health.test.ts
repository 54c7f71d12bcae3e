import { createLogger } from '@pkgreg/server-kit';
import { describeHealthEndpoints } from '@pkgreg/server-kit/vitest';
import { createApp } from '../src/app.js';
import { loadEnv } from '../src/env.js';

describeHealthEndpoints(({ db, redis }) =>
  createApp({ db, redis, logger: createLogger('test', 'silent'), env: loadEnv({}) }),
);
