import {
  type AgentsInvokeArgs,
  type MemoryCompactArgs,
  type MemoryDeleteArgs,
  type MemoryGetArgs,
  type MemoryPutArgs,
  type MemorySearchArgs,
  memoryScope,
  RejectError,
  readableTiers,
  TOOL_NAMES,
} from '@pkgreg/contracts';
import type { Db } from '@pkgreg/db';
import {
  assertNotQuarantined,
  createEntryReader,
  deleteEntry,
  type EntryReader,
  getEntry,
  type MemorySettings,
  putEntry,
  searchEntries,
  withIdempotency,
} from '@pkgreg/memory';
import {
  getTaskRecord,
  getTaskResult,
  type SubmitDeps,
  submitCompact,
  submitInvoke,
  type TaskJobs,
} from '@pkgreg/tasks';
import type { Caller, Runtime } from './runtime.js';

// A runtime on storage it reaches itself: at the edge the development database or a hosted tenant's schema
// (BullMQ jobs run by the runtime worker; the edge only enqueues and waits), behind a tunnel the local
// runtime's own store (jobs run in its process). Memory and task logic live in @pkgreg/memory and
// @pkgreg/tasks; where a task's job runs is the `jobs` it is given.

/** What every local runtime of one edge shares. */
export interface RuntimeSettings {
  /** A sync invoke or compact not done within this is answered as a task. */
  syncThresholdMs: number;
  pollWindowSeconds: number;
  /**
   * Memory search's ranking and, with an embedder, semantic search: each put then enqueues a
   * `memory.embed` job. Default: the default settings, no embedder.
   */
  memory?: MemorySettings;
}

export interface LocalRuntimeOptions extends RuntimeSettings {
  /** Where memory and tasks live. The runtime never closes it: its owner does. */
  db: Db;
  /**
   * Opens where invoke and compact jobs go (openQueueJobs: BullMQ; startInProcessJobs: this process).
   * Called by the first invoke or compact, once; the runtime closes what it returned.
   */
  jobs: () => Promise<TaskJobs>;
}

export interface LocalRuntime extends Runtime {
  /** Closes the jobs, when a call opened them. */
  close(): Promise<void>;
}

/** What a tool call needs of its runtime. */
interface Storage {
  db: Db;
  memory: MemorySettings | undefined;
  /** memory.get lookups of this runtime, sharing one query per event-loop turn. */
  entries: EntryReader;
  /** Queue and task events, opened on first use. */
  submitDeps(): Promise<SubmitDeps>;
}

export function createLocalRuntime(options: LocalRuntimeOptions): LocalRuntime {
  const { db, pollWindowSeconds, syncThresholdMs } = options;
  // Opened by the first invoke or compact: most calls never touch a queue.
  let opened: Promise<TaskJobs> | undefined;
  const storage: Storage = {
    db,
    memory: options.memory,
    entries: createEntryReader(db),
    async submitDeps() {
      if (!opened) {
        const opening = options.jobs();
        opened = opening;
        // A failed open is retried by the next call rather than cached forever.
        opening.catch(() => {
          if (opened === opening) opened = undefined;
        });
      }
      const { queue, events } = await opened;
      return { db, queue, syncThresholdMs, ...(events ? { events } : {}) };
    },
  };

  return {
    callTool: (caller, name, args) => runTool(storage, caller, name, args),
    getTask: (caller, taskId) =>
      getTaskRecord(db, caller.namespace, taskId, pollWindowSeconds, caller.scopes),
    getTaskResult: (caller, taskId) =>
      getTaskResult(db, caller.namespace, taskId, pollWindowSeconds, caller.scopes),
    async close() {
      if (!opened) return;
      await (await opened.catch(() => undefined))?.close();
    },
  };
}

/** One function per runtime tool, so one tool's closures (its idempotent runs) cost the others nothing. */
type ToolRun = (storage: Storage, caller: Caller, args: never) => Promise<object>;

function runTool(storage: Storage, caller: Caller, name: string, args: unknown): Promise<object> {
  const run = TOOL_RUNS.get(name);
  if (!run) return Promise.reject(new RejectError('method_not_found', `unknown tool ${name}`));
  return run(storage, caller, args as never);
}

function put(storage: Storage, caller: Caller, a: MemoryPutArgs): Promise<object> {
  const { db } = storage;
  return idempotent(db, caller, TOOL_NAMES.memoryPut, a, a.idempotencyKey, async () => {
    const result = await putEntry(db, caller.namespace, a);
    if (storage.memory?.embedder) void enqueueEmbedding(storage, caller.namespace, result.entry.entryId);
    return result;
  });
}

/**
 * The worker embeds the new entry (semantic search). Best effort, not awaited: the entry is written, and
 * one without an embedding is still found by text (its similarity counts as 0).
 */
async function enqueueEmbedding(storage: Storage, namespace: string, entryId: string): Promise<void> {
  try {
    const { queue } = await storage.submitDeps();
    await queue.enqueue('memory.embed', { namespace, entryIds: [entryId] }, { jobId: `embed-${entryId}` });
  } catch {
    // Redis away, or a runner without the job: the entry stays without an embedding.
  }
}

/** The read scope is tier-specific: it is checked once the entry, and so its tier, is read. */
async function get(storage: Storage, caller: Caller, a: MemoryGetArgs): Promise<object> {
  const result = await getEntry(storage.db, caller.namespace, a, { reader: storage.entries });
  requireScope(caller, memoryScope(result.entry.tier, 'read'));
  return result;
}

/** decisions.md: search without `tiers` searches the tiers the caller may read. */
function search({ db, memory }: Storage, caller: Caller, a: MemorySearchArgs): Promise<object> {
  return searchEntries(
    db,
    caller.namespace,
    { ...a, tiers: a.tiers ?? readableTiers(caller.scopes) },
    memory
      ? { settings: memory.search, embedder: memory.embedder, embedTimeoutMs: memory.queryTimeoutMs }
      : {},
  );
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
    return submitInvoke(await storage.submitDeps(), {
      namespace: ns,
      clientId: caller.clientId,
      args: a,
      delegation: caller.delegation,
    });
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
