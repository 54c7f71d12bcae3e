import { fileURLToPath } from 'node:url';
import { JOB_CATALOG, type JobName, type JobPayload } from '@pkgreg/contracts';
import { TEST_REDIS_URL } from '@pkgreg/db/testing';
import type { TaskQueue } from '@pkgreg/tasks';
import { type RegistryProcess, startRegistry as startRegistryProcess } from '@pkgreg/testing';

// What the agents' tests run against: task rows in the real PostgreSQL, jobs the test runs itself (as a
// worker delivers them, and again as a redelivery), the real registry-api for package searches, and
// @pkgreg/testing's model stand-in where a model would be.

/**
 * A TaskQueue that keeps each job, validated by its catalog schema as every queue does, for the test
 * to run: the jobs under test are the functions a worker or an in-process runner calls with them.
 */
export function heldJobs() {
  const held: Array<{ name: JobName; payload: unknown }> = [];
  const queue: TaskQueue = {
    async enqueue(name, payload) {
      held.push({ name, payload: JOB_CATALOG[name].schema.parse(payload) });
    },
  };
  return {
    queue,
    /** The last job enqueued as `name`. */
    last<N extends JobName>(name: N): JobPayload<N> {
      const job = held.filter((j) => j.name === name).at(-1);
      if (!job) throw new Error(`no ${name} job was enqueued`);
      return job.payload as JobPayload<N>;
    },
  };
}

const REGISTRY_ENTRY = fileURLToPath(new URL('../../../apps/registry-api/dist/index.js', import.meta.url));

/** The built registry-api on its own port against `databaseUrl` (its searches are the packages' source). */
export function startRegistry(databaseUrl: string): Promise<RegistryProcess> {
  return startRegistryProcess({ entry: REGISTRY_ENTRY, databaseUrl, redisUrl: TEST_REDIS_URL });
}
