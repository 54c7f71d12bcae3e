import { type FileDatabase, useTestDatabase } from '@pkgreg/db/vitest';
import { afterAll, beforeAll } from 'vitest';
import { type RunningRegistry, startRegistry } from './registry.js';
import { type SkillFixture, seedSkills } from './seed.js';

/** This test file's database, with `skills` indexed into it, and the real registry-api serving it. */
export interface SeededRegistry {
  readonly database: FileDatabase;
  readonly registry: RunningRegistry;
}

/**
 * Registers the hooks that give this test file its own database, index `skills` into it and start the
 * registry on it (`env` added to its environment), and that stop the registry and drop the database
 * after the file's tests. Read the fields from tests and hooks (not at module load); call it before the
 * file's own hooks.
 */
export function useSeededRegistry(skills: SkillFixture[], env: Record<string, string> = {}): SeededRegistry {
  const database = useTestDatabase();
  let running: RunningRegistry | undefined;
  beforeAll(async () => {
    await seedSkills(database, skills);
    running = await startRegistry(database.url, env);
  }, 120_000);
  afterAll(async () => {
    await running?.stop();
  });
  const get = (): RunningRegistry => {
    if (!running) throw new Error('the registry is started in beforeAll: read it from a test or hook');
    return running;
  };
  const registry: RunningRegistry = {
    get url() {
      return get().url;
    },
    get port() {
      return get().port;
    },
    stop: () => get().stop(),
  };
  return { database, registry };
}
