import { randomUUID } from 'node:crypto';
import {
  type AgentDelegation,
  type AgentsInvokeArgs,
  type AgentsInvokeResult,
  type CompactOutcome,
  type CompactStrategy,
  compactScopes,
  invokeScopes,
  type MemoryBinding,
  type MemoryCompactArgs,
  type MemoryCompactResult,
  type OutputItem,
  QUEUES,
  RejectError,
  type TaskRecord,
  type TasksResultResult,
  TOOL_NAMES,
} from '@pkgreg/contracts';
import type { Database, Db } from '@pkgreg/db';
import type { Transaction } from 'kysely';
import type { RuntimeQueue, TaskEvents, TaskQueue } from './queue.js';
import {
  deleteExpiredTasks,
  findStaleOpenTasks,
  findSubjectTask,
  findTaskById,
  insertTask,
  isTerminal,
  lockRunningTask,
  markCompleted,
  markFailed,
  markRunning,
  type TaskRow,
} from './task.repository.js';

// Task lifecycle (decisions.md, MCP edge / Tasks): queued → running → completed | failed, visible only
// to the subject that created it, pollable for maxTaskPollWindowSeconds after it ends.

/** mcp-edge.md, Limits: maxTaskPollWindowSeconds. */
export const DEFAULT_POLL_WINDOW_SECONDS = 300;
/** decisions.md, Invoke: "default 10 s, configurable". */
export const DEFAULT_SYNC_THRESHOLD_MS = 10_000;

export interface SubmitDeps {
  db: Db;
  queue: TaskQueue;
  /** How long a sync call waits before it is answered as a task; default 10 s. */
  syncThresholdMs?: number;
  /** Wakes a sync wait as soon as the job ends; without it the row is polled. */
  events?: TaskEvents;
}

export interface TaskError {
  reason: string;
  message: string;
}

/** What a finished run stores: `runId` and `outputs` always (tasks/result), plus tool-specific fields. */
export type TaskResult = { runId: string; outputs: OutputItem[] } & Record<string, unknown>;

export function toTaskRecord(row: TaskRow): TaskRecord {
  return {
    taskId: row.task_id,
    toolName: row.tool_name,
    subjectNamespace: row.subject_namespace,
    canonicalRunId: row.canonical_run_id,
    status: row.status,
    submittedAt: row.submitted_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
    ...(row.status_message !== null ? { statusMessage: row.status_message } : {}),
  };
}

/**
 * The subject's task. With `callerScopes` (every call a client makes), the caller must also hold each
 * scope the call that created the task needed: a token narrowed to fewer scopes reads no more through
 * tasks/get and tasks/result than it could have asked for itself.
 */
async function subjectTask(
  db: Db,
  namespace: string,
  taskId: string,
  pollWindowSeconds: number,
  callerScopes: ReadonlySet<string> | undefined,
): Promise<TaskRow> {
  const row = await findSubjectTask(db, namespace, taskId, pollWindowSeconds);
  // Another subject's task and a missing one are indistinguishable on purpose.
  if (!row) throw new RejectError('task_not_found');
  const missing = callerScopes ? requiredScopesOf(row).filter((s) => !callerScopes.has(s)) : [];
  if (missing.length) {
    throw new RejectError('scope_insufficient', `missing scope ${missing.join(' ')}`, {
      requiredScopes: missing,
    });
  }
  return row;
}

/**
 * The scopes the call that created the task needed, from what the task keeps of it (its tool, memory
 * binding and strategy), by the same rules admission used. A task of any other tool names a scope no
 * token holds, so it can never be read by mistake.
 */
function requiredScopesOf(row: Pick<TaskRow, 'tool_name' | 'input'>): string[] {
  const input = row.input as { memory?: MemoryBinding | null; strategy?: CompactStrategy };
  if (row.tool_name === TOOL_NAMES.agentsInvoke) return invokeScopes(input.memory ?? undefined);
  if (row.tool_name === TOOL_NAMES.memoryCompact && input.strategy) return compactScopes(input.strategy);
  return [`${row.tool_name}.unknown-task`];
}

/** tasks/get. */
export async function getTaskRecord(
  db: Db,
  namespace: string,
  taskId: string,
  pollWindowSeconds = DEFAULT_POLL_WINDOW_SECONDS,
  callerScopes?: ReadonlySet<string>,
): Promise<TaskRecord> {
  return toTaskRecord(await subjectTask(db, namespace, taskId, pollWindowSeconds, callerScopes));
}

/** tasks/result: terminal only; a queued or running task is `task_not_ready`. */
export async function getTaskResult(
  db: Db,
  namespace: string,
  taskId: string,
  pollWindowSeconds = DEFAULT_POLL_WINDOW_SECONDS,
  callerScopes?: ReadonlySet<string>,
): Promise<TasksResultResult> {
  const row = await subjectTask(db, namespace, taskId, pollWindowSeconds, callerScopes);
  if (row.status === 'completed') {
    return { taskId: row.task_id, status: 'completed', result: row.result as TaskResult };
  }
  if (row.status === 'failed') {
    const error = (row.error ?? {}) as Partial<TaskError>;
    return {
      taskId: row.task_id,
      status: 'failed',
      error: { reason: error.reason ?? 'run_failed', message: error.message ?? 'The run failed' },
    };
  }
  throw new RejectError('task_not_ready');
}

const sleep = (ms: number) => {
  let timer: NodeJS.Timeout | undefined;
  const promise = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, ms);
  });
  return { promise, cancel: () => clearTimeout(timer) };
};

/**
 * Waits until the task ends or `timeoutMs` passes and returns its row. An event only wakes the wait;
 * the row decides (a `failed` event of an attempt that will be retried leaves the task running).
 */
export async function waitForTask(
  deps: Pick<SubmitDeps, 'db' | 'events'>,
  taskId: string,
  timeoutMs: number,
): Promise<TaskRow | undefined> {
  const deadline = Date.now() + timeoutMs;
  let pollMs = 5;
  for (;;) {
    const remaining = deadline - Date.now();
    // Subscribe before reading so an end between the read and the wait is not missed.
    const wake = deps.events
      ? deps.events.waitFor(taskId, Math.min(Math.max(remaining, 0), 1000))
      : sleep(Math.min(Math.max(remaining, 0), pollMs));
    const row = await findTaskById(deps.db, taskId);
    if (!row || isTerminal(row.status) || remaining <= 0) {
      wake.cancel();
      return row;
    }
    await wake.promise;
    pollMs = Math.min(pollMs * 2, 200);
  }
}

async function createAndEnqueue(
  deps: SubmitDeps,
  task: { toolName: string; namespace: string; clientId: string | null; input: Record<string, unknown> },
  enqueue: (ids: { taskId: string; runId: string }) => Promise<unknown>,
): Promise<{ taskId: string; runId: string }> {
  const ids = { taskId: randomUUID(), runId: randomUUID() };
  await insertTask(deps.db, { ...ids, ...task });
  try {
    await enqueue(ids);
  } catch (error) {
    // No job will ever run it: end the task now rather than leave a poller waiting on it.
    await markFailed(
      deps.db,
      ids.taskId,
      { reason: 'enqueue_failed', message: 'The run could not be scheduled' },
      DEFAULT_POLL_WINDOW_SECONDS,
    );
    throw error;
  }
  return ids;
}

function accepted(ids: { taskId: string; runId: string }, status: TaskRow['status']) {
  return { mode: 'task' as const, task: { taskId: ids.taskId, status, runId: ids.runId } };
}

/** pkgreg.agents.v1.invoke after admission: every run executes in the runtime worker. */
export async function submitInvoke(
  deps: SubmitDeps,
  request: {
    namespace: string;
    clientId: string | null;
    args: AgentsInvokeArgs;
    /** The person the run may read the registry as (the edge's decision; jobs.ts, AgentDelegationSchema). */
    delegation?: AgentDelegation | undefined;
  },
): Promise<AgentsInvokeResult> {
  const { args, namespace } = request;
  const ids = await createAndEnqueue(
    deps,
    {
      toolName: TOOL_NAMES.agentsInvoke,
      namespace,
      clientId: request.clientId,
      input: {
        agentId: args.agentId,
        input: args.input,
        memory: args.memory ?? null,
        executionMode: args.executionMode,
      },
    },
    (ids) =>
      deps.queue.enqueue('agent.invoke', {
        ...ids,
        namespace,
        agentId: args.agentId,
        input: args.input,
        ...(args.memory ? { memory: args.memory } : {}),
        ...(request.delegation ? { delegation: request.delegation } : {}),
      }),
  );
  if (args.executionMode === 'async') return accepted(ids, 'queued');
  const row = await waitForTask(deps, ids.taskId, deps.syncThresholdMs ?? DEFAULT_SYNC_THRESHOLD_MS);
  if (row?.status === 'completed' && row.result) {
    const result = row.result as TaskResult;
    return { mode: 'completed', runId: ids.runId, outputs: result.outputs };
  }
  // Not done in time, or failed: the caller reads the outcome through tasks/get and tasks/result.
  return accepted(ids, row?.status ?? 'queued');
}

/** pkgreg.memory.v1.compact after admission. */
export async function submitCompact(
  deps: SubmitDeps,
  request: { namespace: string; clientId: string | null; args: MemoryCompactArgs },
): Promise<MemoryCompactResult> {
  const { args, namespace } = request;
  const ids = await createAndEnqueue(
    deps,
    {
      toolName: TOOL_NAMES.memoryCompact,
      namespace,
      clientId: request.clientId,
      input: {
        sourceTier: args.sourceTier,
        strategy: args.strategy,
        maxEntries: args.maxEntries,
        executionMode: args.executionMode,
      },
    },
    (ids) =>
      deps.queue.enqueue('memory.compact', {
        ...ids,
        namespace,
        sourceTier: args.sourceTier,
        strategy: args.strategy,
        maxEntries: args.maxEntries,
      }),
  );
  if (args.executionMode === 'async') return accepted(ids, 'queued');
  const row = await waitForTask(deps, ids.taskId, deps.syncThresholdMs ?? DEFAULT_SYNC_THRESHOLD_MS);
  if (row?.status === 'completed' && row.result) {
    const result = row.result as TaskResult & Partial<CompactOutcome>;
    return {
      mode: 'completed',
      runId: ids.runId,
      strategy: result.strategy ?? args.strategy,
      sourceEntryIds: result.sourceEntryIds ?? [],
      createdEntries: result.createdEntries ?? [],
    };
  }
  return accepted(ids, row?.status ?? 'queued');
}

// ---- Worker side ----

export type StartOutcome =
  | { state: 'started'; task: TaskRow }
  | { state: 'finished' | 'missing'; task?: TaskRow };

/**
 * Moves the task to running for this delivery. `finished` means an earlier delivery already ended it:
 * the job must do nothing. `missing` means the row is gone (purged or never written).
 */
export async function startTask(db: Db, taskId: string): Promise<StartOutcome> {
  const task = await markRunning(db, taskId);
  if (task) return { state: 'started', task };
  const current = await findTaskById(db, taskId);
  return current ? { state: 'finished', task: current } : { state: 'missing' };
}

/**
 * Runs `effects` and the completion in ONE transaction that first locks the row while it is running.
 * A duplicate or late delivery waits on the lock, then finds the task ended and writes nothing, so the
 * effects happen once per task however often the job is delivered.
 */
export async function completeTask<R extends TaskResult>(
  db: Db,
  taskId: string,
  effects: (trx: Transaction<Database>, task: TaskRow) => Promise<R>,
  pollWindowSeconds = DEFAULT_POLL_WINDOW_SECONDS,
): Promise<{ applied: true; result: R } | { applied: false }> {
  return db.transaction().execute(async (trx) => {
    const task = await lockRunningTask(trx, taskId);
    if (!task) return { applied: false as const };
    const result = await effects(trx, task);
    await markCompleted(trx, taskId, result, pollWindowSeconds);
    return { applied: true as const, result };
  });
}

/** Ends a task as failed (no-op when it already ended). Messages must never carry memory or secrets. */
export async function failTask(
  db: Db,
  taskId: string,
  error: TaskError,
  pollWindowSeconds = DEFAULT_POLL_WINDOW_SECONDS,
): Promise<boolean> {
  return (await markFailed(db, taskId, error, pollWindowSeconds)) !== undefined;
}

/** Deletes tasks whose poll window has passed; returns how many. */
export async function purgeExpiredTasks(db: Db): Promise<number> {
  return deleteExpiredTasks(db);
}

/**
 * Fails open tasks whose job no longer exists or has failed for good (e.g. it stalled past the limit
 * while no worker was alive to record it), so no task is stuck in queued/running forever.
 */
export async function failOrphanedTasks(
  db: Db,
  queue: RuntimeQueue,
  options: { olderThanSeconds: number; limit?: number; pollWindowSeconds?: number },
): Promise<number> {
  const stale = await findStaleOpenTasks(db, options.olderThanSeconds, options.limit ?? 500);
  let failed = 0;
  for (const task of stale) {
    const job = await queue.queue(QUEUES.runtime).getJob(task.task_id);
    const state = job ? await job.getState() : 'missing';
    if (state === 'missing' || state === 'unknown' || state === 'failed' || state === 'completed') {
      const ended = await failTask(
        db,
        task.task_id,
        { reason: 'run_lost', message: 'The run ended without a result' },
        options.pollWindowSeconds,
      );
      if (ended) failed += 1;
    }
  }
  return failed;
}
