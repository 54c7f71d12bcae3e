import { RejectError, type TaskRecord, type TaskStatus, type TasksResultResult } from '@pkgreg/contracts';
import type { Caller, Runtime } from '@pkgreg/runtime';
import { TaskCreated } from './modern.js';
import { SerializedResult, toolCallResult } from './transport.js';

// The tasks extension (io.modelcontextprotocol/tasks) over the contract's own tasks, for 2026-07-28
// clients that declare it (docs/decisions.md, "MCP 2026-07-28"): an invoke or compact that became a
// task is answered with a CreateTaskResult, tasks/get returns the task with its result or error inline.
// The contract's task records stay the one status model; this maps them.

/** How often a client should poll (the runtime's tasks end within seconds to minutes). */
const POLL_INTERVAL_MS = 1000;
/** How often the edge itself looks at a task it waits on for a client that cannot poll. */
const UNTASKED_POLL_MS = 200;

const STATUS: Record<TaskStatus, 'working' | 'completed' | 'failed'> = {
  queued: 'working',
  running: 'working',
  completed: 'completed',
  failed: 'failed',
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

/** The CreateTaskResult of a task just submitted; it can be polled at once (it is stored first). */
export function createdTask(
  handle: { taskId: string; status: TaskStatus; runId: string },
  pollWindowSeconds: number,
): TaskCreated {
  const now = new Date().toISOString();
  return new TaskCreated(
    JSON.stringify({
      resultType: 'task',
      taskId: handle.taskId,
      status: STATUS[handle.status],
      createdAt: now,
      lastUpdatedAt: now,
      ttlMs: pollWindowSeconds * 1000,
      pollIntervalMs: POLL_INTERVAL_MS,
      // The contract's run id, for pkgreg's own records (the trace and audit of the run).
      'pkgreg.dev/runId': handle.runId,
    }),
  );
}

/** tasks/get: the caller's task as the extension describes it, its result or error once it ended. */
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
  if (ended.status === 'completed')
    return { ...task, result: JSON.parse(toolCallResult(ended.result).json) as object };
  return {
    ...task,
    error: { code: -32603, message: ended.error.message, data: { reason: ended.error.reason } },
  };
}

/**
 * tasks/cancel and tasks/update: a task of the caller's that has ended is acknowledged (nothing is left
 * to cancel); a running one cannot be stopped, and none ever waits for input.
 */
export async function unsupportedTaskChange(
  runtime: Runtime,
  caller: Caller,
  taskId: string,
  method: 'tasks/cancel' | 'tasks/update',
): Promise<object> {
  const record = (await runtime.getTask(caller, taskId)) as TaskRecord;
  const ended = STATUS[record.status] !== 'working';
  if (method === 'tasks/cancel' && ended) return {};
  throw new RejectError(
    'request_schema_invalid',
    method === 'tasks/cancel'
      ? `task ${taskId} cannot be cancelled: pkgreg's runs end by themselves (poll tasks/get)`
      : `task ${taskId} is not waiting for input`,
  );
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
      const ended = (await runtime.getTaskResult(caller, taskId)) as TasksResultResult;
      if (ended.status === 'completed') return toolCallResult(ended.result);
      return new SerializedResult(
        JSON.stringify({ content: [{ type: 'text', text: ended.error.message }], isError: true }),
      );
    }
    const left = deadline - Date.now();
    if (left <= 0) return undefined;
    await new Promise((resolve) => setTimeout(resolve, Math.min(UNTASKED_POLL_MS, left)));
  }
}
