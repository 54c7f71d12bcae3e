import { afterAll, beforeAll } from 'vitest';
import type { Db } from './create-db.js';
import { createTestDatabase, type TestDatabase } from './testing.js';

// `@pkgreg/db/vitest`: the per-file database set-up every integration test file shares. Apart from
// `@pkgreg/db/testing` because it registers vitest hooks (benchmarks use createTestDatabase without vitest).

/** This test file's own database, created before its tests and dropped after them. */
export interface FileDatabase {
  readonly db: Db;
  readonly url: string;
}

/**
 * Registers beforeAll/afterAll for a fresh migrated database and returns it; `db` and `url` may be read
 * from the tests and later hooks (not at module load). Call it at the top of the file, before the file's
 * own hooks, so theirs run once the database exists.
 */
export function useTestDatabase(): FileDatabase {
  let current: TestDatabase | undefined;
  beforeAll(async () => {
    current = await createTestDatabase();
  });
  afterAll(async () => {
    await current?.destroy();
  });
  const get = (): TestDatabase => {
    if (!current) throw new Error('the test database is created in beforeAll: read it from a test or hook');
    return current;
  };
  return {
    get db() {
      return get().db;
    },
    get url() {
      return get().url;
    },
  };
}
