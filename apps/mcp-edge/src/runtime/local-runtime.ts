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

// A runtime on storage the edge reaches itself: the development database, a hosted tenant's schema
// (tenant-provisioner.ts), or the local runtime behind a tunnel (tunnel.routes.ts). Memory and task logic
// live in @pkgreg/memory and @pkgreg/tasks; agent runs execute in the runtime worker (the edge only
// enqueues and waits).

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
  const { db, pollWindowSeconds } = options;
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

  return {
    callTool: (caller, name, args) => runTool(storage, caller, name, args),
    getTask: (caller, taskId) => getTaskRecord(db, caller.namespace, taskId, pollWindowSeconds),
    getTaskResult: (caller, taskId) => getTaskResult(db, caller.namespace, taskId, pollWindowSeconds),
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

/** One function per runtime tool, so one tool's closures (its idempotent runs) cost the others nothing. */
type ToolRun = (storage: Storage, caller: Caller, args: never) => Promise<object>;

function runTool(storage: Storage, caller: Caller, name: string, args: unknown): Promise<object> {
  const run = TOOL_RUNS.get(name);
  if (!run) return Promise.reject(new RejectError('method_not_found', `unknown tool ${name}`));
  return run(storage, caller, args as never);
}

function put({ db }: Storage, caller: Caller, a: MemoryPutArgs): Promise<object> {
  return idempotent(db, caller, TOOL_NAMES.memoryPut, a, a.idempotencyKey, () =>
    putEntry(db, caller.namespace, a),
  );
}

/** The read scope is tier-specific: it is checked once the entry, and so its tier, is read. */
async function get(storage: Storage, caller: Caller, a: MemoryGetArgs): Promise<object> {
  const result = await getEntry(storage.db, caller.namespace, a, { reader: storage.entries });
  requireScope(caller, memoryScope(result.entry.tier, 'read'));
  return result;
}

/** decisions.md: search without `tiers` searches the tiers the caller may read. */
function search({ db }: Storage, caller: Caller, a: MemorySearchArgs): Promise<object> {
  return searchEntries(db, caller.namespace, { ...a, tiers: a.tiers ?? readableTiers(caller.scopes) });
}

function remove({ db }: Storage, caller: Caller, a: MemoryDeleteArgs): Promise<object> {
  const ns = caller.namespace;
  return idempotent(db, caller, TOOL_NAMES.memoryDelete, a, a.idempotencyKey, async () => {
    // The delete scope is tier-specific: learn the entry's tier before touching it.
    const { entry } = await getEntry(db, ns, { entryId: a.entryId });
    requireScope(caller, memoryScope(entry.tier, 'delete'));
    return deleteEntry(db, ns, a);
  });
}

function compact(storage: Storage, caller: Caller, a: MemoryCompactArgs): Promise<object> {
  const { db } = storage;
  const ns = caller.namespace;
  return idempotent(db, caller, TOOL_NAMES.memoryCompact, a, a.idempotencyKey, async () => {
    await assertNotQuarantined(db, ns);
    return submitCompact(await storage.submitDeps(), { namespace: ns, clientId: caller.clientId, args: a });
  });
}

function invoke(storage: Storage, caller: Caller, a: AgentsInvokeArgs): Promise<object> {
  const { db } = storage;
  const ns = caller.namespace;
  return idempotent(db, caller, TOOL_NAMES.agentsInvoke, a, a.idempotencyKey, async () => {
    if (a.memory?.writeTiers.length) await assertNotQuarantined(db, ns);
    return submitInvoke(await storage.submitDeps(), { namespace: ns, clientId: caller.clientId, args: a });
  });
}

const TOOL_RUNS = new Map<string, ToolRun>([
  [TOOL_NAMES.memoryPut, put],
  [TOOL_NAMES.memoryGet, get],
  [TOOL_NAMES.memorySearch, search],
  [TOOL_NAMES.memoryDelete, remove],
  [TOOL_NAMES.memoryCompact, compact],
  [TOOL_NAMES.agentsInvoke, invoke],
]);

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
