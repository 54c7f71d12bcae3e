import type { Db } from '@pkgreg/db';
import { createEntryReader, type EntryReader } from '@pkgreg/memory';
import { createRuntimeQueue, createTaskEvents, type SubmitDeps } from '@pkgreg/tasks';
import type { RuntimeContext } from './tools/tool-handlers.js';

/**
 * One runtime queue (and task-event listener) per backend, opened on the first invoke or compact that
 * needs it: most requests never touch a queue, and hosted tenants each have their own prefix.
 */
export function createRuntimes(options: { redisUrl: string; syncThresholdMs: number }) {
  const opened = new Map<string, Promise<SubmitDeps>>();
  // memory.get lookups per database instance (not per backend key: a hosted tenant whose migration
  // failed gets a new database instance under the same key), coalesced per event-loop turn.
  const readers = new WeakMap<Db, EntryReader>();

  function open(db: Db, prefix: string): Promise<SubmitDeps> {
    const queue = createRuntimeQueue({ connection: options.redisUrl, prefix });
    return createTaskEvents({ connection: options.redisUrl, prefix }).then(
      (events) => ({ db, queue, events, syncThresholdMs: options.syncThresholdMs }),
      // Without events a sync wait polls the task row: slower, still correct.
      () => ({ db, queue, syncThresholdMs: options.syncThresholdMs }),
    );
  }

  return {
    forBackend(backend: { db: Db; queuePrefix: string; key: string }): RuntimeContext {
      let entries = readers.get(backend.db);
      if (!entries) {
        entries = createEntryReader(backend.db);
        readers.set(backend.db, entries);
      }
      return {
        db: backend.db,
        entries,
        submitDeps() {
          let deps = opened.get(backend.key);
          if (!deps) {
            deps = open(backend.db, backend.queuePrefix);
            opened.set(backend.key, deps);
          }
          return deps;
        },
      };
    },
    async close() {
      await Promise.allSettled(
        [...opened.values()].map(async (p) => {
          const deps = await p;
          await Promise.allSettled([deps.queue.close(), deps.events?.close()]);
        }),
      );
    },
  };
}
export type Runtimes = ReturnType<typeof createRuntimes>;
