import { closeSync, mkdirSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { createDb, type Db, migrateToLatest } from '@pkgreg/db';
import { createEmbeddedDb } from '@pkgreg/db/embedded';
import type { Config } from './env.js';

// Where this runtime's memory and tasks live: the embedded store (PGlite, files under the data folder)
// by default, so a laptop needs no PostgreSQL of its own; a DATABASE_URL when given, in a schema of the
// session's own. Either way the same migrations as the edge's database run first.

export interface Store {
  db: Db;
  /** Said at start: `embedded <folder>` or `postgres`. */
  description: string;
  close(): Promise<void>;
}

export async function openStore(store: Config['store']): Promise<Store> {
  if (store.kind === 'postgres') {
    const { schema } = store;
    const db = createDb(store.url, { applicationName: 'pkgreg-runtime', max: 8, schema });
    try {
      await migrateToLatest(db, { schema });
    } catch (error) {
      await db.destroy();
      throw error;
    }
    return { db, description: `postgres, schema ${schema}`, close: () => db.destroy() };
  }
  mkdirSync(store.dataDir, { recursive: true, mode: 0o700 });
  const release = lockDataDir(store.dataDir);
  let db: Db | undefined;
  try {
    db = await createEmbeddedDb({ dataDir: join(store.dataDir, 'pgdata') });
    await migrateToLatest(db);
  } catch (error) {
    await db?.destroy().catch(() => undefined);
    release();
    throw error;
  }
  const opened = db;
  return {
    db: opened,
    description: `embedded ${store.dataDir}`,
    async close() {
      try {
        await opened.destroy();
      } finally {
        release();
      }
    },
  };
}

/**
 * One process per data folder: two PGlite instances writing the same files would corrupt them. The lock
 * file holds the owner's pid; a lock whose process is gone (killed) is taken over.
 */
function lockDataDir(dataDir: string): () => void {
  const path = join(dataDir, 'runtime.lock');
  for (let attempt = 0; attempt < 2; attempt += 1) {
    try {
      const fd = openSync(path, 'wx', 0o600);
      writeSync(fd, String(process.pid));
      closeSync(fd);
      return () => {
        try {
          unlinkSync(path);
        } catch {
          // already gone
        }
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const owner = Number.parseInt(readFileSync(path, 'utf8'), 10);
      if (Number.isInteger(owner) && owner !== process.pid && isAlive(owner)) {
        throw new Error(`the data folder ${dataDir} is in use by process ${owner}`);
      }
      unlinkSync(path);
    }
  }
  throw new Error(`could not lock the data folder ${dataDir}`);
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
