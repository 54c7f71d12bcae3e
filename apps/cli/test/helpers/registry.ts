import { fileURLToPath } from 'node:url';
import { TEST_REDIS_URL } from '@pkgreg/db/testing';
import { type RegistryProcess, startRegistry as startRegistryProcess } from '@pkgreg/testing';

const REGISTRY_ENTRY = fileURLToPath(new URL('../../../registry-api/dist/index.js', import.meta.url));

/** What the CLI's tests use of the running registry. */
export type RunningRegistry = Pick<RegistryProcess, 'url' | 'port' | 'stop'>;

/**
 * Starts the real registry-api (`node apps/registry-api/dist/index.js`) on the test's own database;
 * `env` adds to (or overrides) its environment.
 */
export function startRegistry(
  databaseUrl: string,
  env: Record<string, string> = {},
): Promise<RunningRegistry> {
  return startRegistryProcess({
    entry: REGISTRY_ENTRY,
    databaseUrl,
    redisUrl: TEST_REDIS_URL,
    env: {
      // The detail micro-cache (1 s by default) would hide a re-index from the very next CLI call.
      DETAIL_CACHE_TTL_MS: '0',
      // Every test registry counts in the same Redis keys, from 127.0.0.1, run after run: publishing's
      // limits (registry-api's tests try them) would soon refuse the tests' own publishes.
      PUBLISHES_PER_HOUR: '100000',
      WEBHOOK_DELIVERIES_PER_REPOSITORY_PER_HOUR: '100000',
      ...env,
    },
  });
}
