import { describeHealthEndpoints } from '@pkgreg/server-kit/vitest';
import { createApp } from '../src/app.js';
import { loadEnv } from '../src/env.js';
import { silentLogger } from './fixtures.js';

describeHealthEndpoints(({ db, redis }) => createApp({ db, redis, logger: silentLogger, env: loadEnv({}) }));
