import type { TaskRecord, TaskStatus, TasksResultResult } from '@pkgreg/contracts';
import type { Caller, Runtime } from '@pkgreg/runtime';
import { TaskCreated } from './modern.js';
import { SerializedResult, toolCallResult } from './transport.js';

// The tasks extension (io.modelcontextprotocol/tasks) over the contract's own tasks, for 2026-07-28
// clients that declare it (docs/decisions.md, "MCP 2026-07-28"): an invoke or compact that became a
// task is answered with a CreateTaskResult, tasks/get returns the task with its result inline. The
// contract's task records stay the one status model; this maps them.

/** How often a client should poll (the runtime's tasks end within seconds to minutes). */
const POLL_INTERVAL_MS = 1000;
/** How often the edge itself looks at a task it waits on for a client that cannot poll. */
const UNTASKED_POLL_MS = 200;

// A failed run is a tool result with `isError` (what the call returns without the extension), so its
// task is `completed`: the extension keeps `failed` for a JSON-RPC error, and once a task exists the call
// has none left to give (a run that could not be scheduled fails the call itself, before any task).
const STATUS: Record<TaskStatus, 'working' | 'completed'> = {
  queued: 'working',
  running: 'working',
  completed: 'completed',
  failed: 'completed',
};

/** A tool result that is the contract's task handle (`mode: "task"`). */
export function taskHandleOf(
  result: object,
): { taskId: string; status: TaskStatus; runId: string } | undefined {
  const { mode, task } = result as {
    mode?: unknown;
    task?: { taskId: string; status: TaskStatus; runId: string };
  };
  return mode === 'task' && task ? task : undefined;
}

/**
 * The CreateTaskResult of a task just submitted, its times from the stored record (which tasks/get reads
 * too, so the two agree). Without the record (an idempotent replay of a task whose record has expired, a
 * read that failed) the call still ran: the handle's status and the current time stand in.
 */
export function createdTask(
  handle: { taskId: string; status: TaskStatus; runId: string },
  record: TaskRecord | undefined,
  pollWindowSeconds: number,
): TaskCreated {
  const now = new Date().toISOString();
  return new TaskCreated(
    JSON.stringify({
      resultType: 'task',
      taskId: handle.taskId,
      status: STATUS[record?.status ?? handle.status],
      createdAt: record?.submittedAt ?? now,
      lastUpdatedAt: record?.updatedAt ?? now,
      ttlMs: pollWindowSeconds * 1000,
      pollIntervalMs: POLL_INTERVAL_MS,
      // The contract's run id, for pkgreg's own records (the trace and audit of the run).
      'pkgreg.dev/runId': handle.runId,
    }),
  );
}

/** What the tool call returns once its task ended: its result, or a failed run as a tool error. */
function endedCallResult(ended: TasksResultResult): SerializedResult {
  if (ended.status === 'completed') return toolCallResult(ended.result);
  return new SerializedResult(
    JSON.stringify({ content: [{ type: 'text', text: ended.error.message }], isError: true }),
  );
}

/** tasks/get: the caller's task as the extension describes it, with the call's result once it ended. */
export async function detailedTask(
  runtime: Runtime,
  caller: Caller,
  taskId: string,
  pollWindowSeconds: number,
): Promise<object> {
  const record = (await runtime.getTask(caller, taskId)) as TaskRecord;
  const task = {
    taskId: record.taskId,
    status: STATUS[record.status],
    createdAt: record.submittedAt,
    lastUpdatedAt: record.updatedAt,
    ttlMs: pollWindowSeconds * 1000,
    pollIntervalMs: POLL_INTERVAL_MS,
    // What a running task is doing now; the contract's record carries it only while it runs.
    ...(record.statusMessage !== undefined ? { statusMessage: record.statusMessage } : {}),
  };
  if (task.status === 'working') return task;
  const ended = (await runtime.getTaskResult(caller, taskId)) as TasksResultResult;
  return { ...task, result: JSON.parse(endedCallResult(ended).json) as object };
}

/**
 * tasks/cancel and tasks/update of a task of the caller's (another's, or none, is `task_not_found`, as
 * for tasks/get): acknowledged with an empty result, which is all the extension obliges. A run cannot be
 * stopped, so a cancelled one still completes and tasks/get tells how; none ever waits for input, so
 * every input response is one the extension says to ignore.
 */
export async function acknowledgedTaskChange(
  runtime: Runtime,
  caller: Caller,
  taskId: string,
): Promise<object> {
  await runtime.getTask(caller, taskId);
  return {};
}

/**
 * A 2026-07-28 client without the tasks extension cannot poll a task: a call that became one is waited
 * for here, up to `waitMs`, and answered as a call that ended in time (a failed run as a tool error).
 * Undefined when it is still running then.
 */
export async function outcomeWithin(
  runtime: Runtime,
  caller: Caller,
  taskId: string,
  waitMs: number,
): Promise<SerializedResult | undefined> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    const record = (await runtime.getTask(caller, taskId)) as TaskRecord;
    if (STATUS[record.status] !== 'working') {
      return endedCallResult((await runtime.getTaskResult(caller, taskId)) as TasksResultResult);
    }
    const left = deadline - Date.now();
    if (left <= 0) return undefined;
    await new Promise((resolve) => setTimeout(resolve, Math.min(UNTASKED_POLL_MS, left)));
  }
}
