import {
  type AgentsInvokeArgs,
  type MemoryCompactArgs,
  type MemoryDeleteArgs,
  type MemoryGetArgs,
  type MemoryPutArgs,
  type MemorySearchArgs,
  memoryScope,
  RejectError,
  TOOL_NAMES,
} from '@pkgreg/contracts';
import type { Db } from '@pkgreg/db';
import {
  assertNotQuarantined,
  createEntryReader,
  deleteEntry,
  type EntryReader,
  getEntry,
  putEntry,
  searchEntries,
  withIdempotency,
} from '@pkgreg/memory';
import {
  createRuntimeQueue,
  createTaskEvents,
  getTaskRecord,
  getTaskResult,
  type SubmitDeps,
  submitCompact,
  submitInvoke,
} from '@pkgreg/tasks';
import { readableTiers } from '../tools/tool-catalog.js';
import type { Caller, Runtime } from './runtime.js';

// A runtime on storage the edge reaches itself: the development database, a hosted tenant's schema, or
// the local runtime behind a tunnel (tunnel.routes.ts). Memory and task logic live in @pkgreg/memory and
// @pkgreg/tasks; agent runs execute in the runtime worker (the edge only enqueues and waits).

/** What every local runtime of one edge shares. */
export interface RuntimeSettings {
  redisUrl: string;
  /** A sync invoke or compact not done within this is answered as a task. */
  syncThresholdMs: number;
  pollWindowSeconds: number;
}

export interface LocalRuntimeOptions extends RuntimeSettings {
  /** Where memory and tasks live. The runtime never closes it: its owner does. */
  db: Db;
  /** BullMQ prefix of this runtime's queues. */
  queuePrefix: string;
  /** Resolves once `db` is usable (a hosted tenant's migration); calls wait for it. */
  ready?: Promise<void>;
}

export interface LocalRuntime extends Runtime {
  /** Closes the queue and task events, when a call opened them. */
  close(): Promise<void>;
}

/** What a tool call needs of its runtime. */
interface Storage {
  db: Db;
  /** memory.get lookups of this runtime, sharing one query per event-loop turn. */
  entries: EntryReader;
  /** Queue and task events, opened on first use. */
  submitDeps(): Promise<SubmitDeps>;
}

export function createLocalRuntime(options: LocalRuntimeOptions): LocalRuntime {
  const { db, ready, pollWindowSeconds } = options;
  // Opened by the first invoke or compact: most calls never touch a queue.
  let opened: Promise<SubmitDeps> | undefined;
  const storage: Storage = {
    db,
    entries: createEntryReader(db),
    submitDeps() {
      opened ??= openQueue(options);
      return opened;
    },
  };

  // A hosted tenant's calls wait for its migration; the others start at once, with no promise of their own.
  return {
    callTool(caller, name, args) {
      if (ready) return ready.then(() => runTool(storage, caller, name, args));
      return runTool(storage, caller, name, args);
    },
    getTask(caller, taskId) {
      if (ready) return ready.then(() => getTaskRecord(db, caller.namespace, taskId, pollWindowSeconds));
      return getTaskRecord(db, caller.namespace, taskId, pollWindowSeconds);
    },
    getTaskResult(caller, taskId) {
      if (ready) return ready.then(() => getTaskResult(db, caller.namespace, taskId, pollWindowSeconds));
      return getTaskResult(db, caller.namespace, taskId, pollWindowSeconds);
    },
    async close() {
      if (!opened) return;
      const deps = await opened;
      await Promise.allSettled([deps.queue.close(), deps.events?.close()]);
    },
  };
}

function openQueue(options: LocalRuntimeOptions): Promise<SubmitDeps> {
  const { db, redisUrl: connection, queuePrefix: prefix, syncThresholdMs } = options;
  const queue = createRuntimeQueue({ connection, prefix });
  return createTaskEvents({ connection, prefix }).then(
    (events) => ({ db, queue, events, syncThresholdMs }),
    // Without events a sync wait polls the task row: slower, still correct.
    () => ({ db, queue, syncThresholdMs }),
  );
}

function runTool(storage: Storage, caller: Caller, name: string, args: unknown): Promise<object> {
  const { db } = storage;
  const ns = caller.namespace;
  switch (name) {
    case TOOL_NAMES.memoryPut: {
      const a = args as MemoryPutArgs;
      return idempotent(db, caller, name, a, a.idempotencyKey, () => putEntry(db, ns, a));
    }
    case TOOL_NAMES.memoryGet:
      return getReadable(storage, caller, args as MemoryGetArgs);
    case TOOL_NAMES.memorySearch: {
      const a = args as MemorySearchArgs;
      // decisions.md: search without `tiers` searches the tiers the caller may read.
      return searchEntries(db, ns, { ...a, tiers: a.tiers ?? readableTiers(caller.scopes) });
    }
    case TOOL_NAMES.memoryDelete: {
      const a = args as MemoryDeleteArgs;
      return idempotent(db, caller, name, a, a.idempotencyKey, async () => {
        // The delete scope is tier-specific: learn the entry's tier before touching it.
        const { entry } = await getEntry(db, ns, { entryId: a.entryId });
        requireScope(caller, memoryScope(entry.tier, 'delete'));
        return deleteEntry(db, ns, a);
      });
    }
    case TOOL_NAMES.memoryCompact: {
      const a = args as MemoryCompactArgs;
      return idempotent(db, caller, name, a, a.idempotencyKey, async () => {
        await assertNotQuarantined(db, ns);
        return submitCompact(await storage.submitDeps(), {
          namespace: ns,
          clientId: caller.clientId,
          args: a,
        });
      });
    }
    case TOOL_NAMES.agentsInvoke: {
      const a = args as AgentsInvokeArgs;
      return idempotent(db, caller, name, a, a.idempotencyKey, async () => {
        if (a.memory?.writeTiers.length) await assertNotQuarantined(db, ns);
        return submitInvoke(await storage.submitDeps(), {
          namespace: ns,
          clientId: caller.clientId,
          args: a,
        });
      });
    }
    default:
      return Promise.reject(new RejectError('method_not_found', `unknown tool ${name}`));
  }
}

/** The read scope is tier-specific: it is checked once the entry, and so its tier, is read. */
async function getReadable(storage: Storage, caller: Caller, args: MemoryGetArgs): Promise<object> {
  const result = await getEntry(storage.db, caller.namespace, args, { reader: storage.entries });
  requireScope(caller, memoryScope(result.entry.tier, 'read'));
  return result;
}

function idempotent<R extends object>(
  db: Db,
  caller: Caller,
  toolName: string,
  args: object,
  key: string | undefined,
  run: () => Promise<R>,
): Promise<R> {
  return withIdempotency(db, { namespace: caller.namespace, toolName, key, args }, run);
}

function requireScope(caller: Caller, scope: string): void {
  if (!caller.scopes.has(scope)) {
    throw new RejectError('scope_insufficient', `missing scope ${scope}`, { requiredScopes: [scope] });
  }
}
