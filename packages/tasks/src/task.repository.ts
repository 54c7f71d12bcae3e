import type { Database, Db } from '@pkgreg/db';
import { type Kysely, type Selectable, sql, type Transaction } from 'kysely';

// SQL for the tasks table. Every status change is a check-and-set (UPDATE … WHERE status = expected
// RETURNING): BullMQ delivers at least once, so a late or duplicate delivery must find nothing to change.

export type TaskRow = Selectable<Database['tasks']>;
type Executor = Db | Kysely<Database> | Transaction<Database>;

export const TERMINAL_STATUSES = ['completed', 'failed'] as const;

export function isTerminal(status: TaskRow['status']): boolean {
  return status === 'completed' || status === 'failed';
}

const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isUuid(value: string): boolean {
  return UUID_PATTERN.test(value);
}

export interface NewTask {
  taskId: string;
  runId: string;
  toolName: string;
  namespace: string;
  clientId: string | null;
  input: Record<string, unknown>;
}

export async function insertTask(db: Executor, task: NewTask): Promise<TaskRow> {
  return db
    .insertInto('tasks')
    .values({
      task_id: task.taskId,
      canonical_run_id: task.runId,
      tool_name: task.toolName,
      subject_namespace: task.namespace,
      client_id: task.clientId,
      input: JSON.stringify(task.input),
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function findTaskById(db: Executor, taskId: string): Promise<TaskRow | undefined> {
  if (!isUuid(taskId)) return undefined;
  return db.selectFrom('tasks').selectAll().where('task_id', '=', taskId).executeTakeFirst();
}

/**
 * The subject's task, unless it ended more than `pollWindowSeconds` ago: past the poll window a task
 * reads as absent even before the purge job deletes it.
 */
export async function findSubjectTask(
  db: Executor,
  namespace: string,
  taskId: string,
  pollWindowSeconds: number,
): Promise<TaskRow | undefined> {
  if (!isUuid(taskId)) return undefined;
  return db
    .selectFrom('tasks')
    .selectAll()
    .where('task_id', '=', taskId)
    .where('subject_namespace', '=', namespace)
    .where((eb) =>
      eb.or([
        eb('finished_at', 'is', null),
        eb('finished_at', '>', sql<Date>`now() - make_interval(secs => ${pollWindowSeconds})`),
      ]),
    )
    .executeTakeFirst();
}

/**
 * queued → running, or running → running when a stalled delivery is retried (the worker that held it
 * died). A terminal task is never restarted: the caller gets undefined and treats the job as done.
 */
export async function markRunning(db: Executor, taskId: string): Promise<TaskRow | undefined> {
  return db
    .updateTable('tasks')
    .set({
      status: 'running',
      started_at: sql<Date>`coalesce(started_at, now())`,
      updated_at: sql<Date>`now()`,
      attempts: sql<number>`attempts + 1`,
      // A redelivered run starts over: the stalled delivery's last step is not this one's.
      status_message: null,
    })
    .where('task_id', '=', taskId)
    .where('status', 'in', ['queued', 'running'])
    .returningAll()
    .executeTakeFirst();
}

/**
 * Locks the task row if it is still running. Inside a transaction this serialises concurrent
 * completions: the loser waits on the lock, then finds the row no longer running.
 */
export async function lockRunningTask(
  trx: Transaction<Database>,
  taskId: string,
): Promise<TaskRow | undefined> {
  return trx
    .selectFrom('tasks')
    .selectAll()
    .where('task_id', '=', taskId)
    .where('status', '=', 'running')
    .forUpdate()
    .executeTakeFirst();
}

export async function markCompleted(
  db: Executor,
  taskId: string,
  result: Record<string, unknown>,
  pollWindowSeconds: number,
): Promise<TaskRow | undefined> {
  return db
    .updateTable('tasks')
    .set({
      status: 'completed',
      result: JSON.stringify(result),
      // The result says how the run went: a step's message would only be stale now.
      status_message: null,
      finished_at: sql<Date>`now()`,
      updated_at: sql<Date>`now()`,
      expires_at: sql<Date>`now() + make_interval(secs => ${pollWindowSeconds})`,
    })
    .where('task_id', '=', taskId)
    .where('status', '=', 'running')
    .returningAll()
    .executeTakeFirst();
}

/**
 * The running task's status message (and `updated_at`: tasks/get's lastUpdatedAt). Only while it runs, so a
 * late write cannot put a message back on a task that ended: false when nothing was written.
 */
export async function updateStatusMessage(db: Executor, taskId: string, message: string): Promise<boolean> {
  const { numUpdatedRows } = await db
    .updateTable('tasks')
    .set({ status_message: message, updated_at: sql<Date>`now()` })
    .where('task_id', '=', taskId)
    .where('status', '=', 'running')
    .executeTakeFirst();
  return numUpdatedRows > 0n;
}

/** queued|running → failed. A task that already ended keeps its outcome. */
export async function markFailed(
  db: Executor,
  taskId: string,
  error: { reason: string; message: string },
  pollWindowSeconds: number,
): Promise<TaskRow | undefined> {
  return db
    .updateTable('tasks')
    .set({
      status: 'failed',
      error: JSON.stringify(error),
      status_message: null,
      finished_at: sql<Date>`now()`,
      updated_at: sql<Date>`now()`,
      expires_at: sql<Date>`now() + make_interval(secs => ${pollWindowSeconds})`,
    })
    .where('task_id', '=', taskId)
    .where('status', 'in', ['queued', 'running'])
    .returningAll()
    .executeTakeFirst();
}

/** Every queued or running task → failed: their runs were lost with the process that held them. */
export async function failUnfinishedTasks(
  db: Executor,
  error: { reason: string; message: string },
  pollWindowSeconds: number,
): Promise<number> {
  const rows = await db
    .updateTable('tasks')
    .set({
      status: 'failed',
      error: JSON.stringify(error),
      status_message: null,
      finished_at: sql<Date>`now()`,
      updated_at: sql<Date>`now()`,
      expires_at: sql<Date>`now() + make_interval(secs => ${pollWindowSeconds})`,
    })
    .where('status', 'in', ['queued', 'running'])
    .returning('task_id')
    .execute();
  return rows.length;
}

/** Ended tasks whose poll window has passed. */
export async function deleteExpiredTasks(db: Executor): Promise<number> {
  const rows = await db
    .deleteFrom('tasks')
    .where('expires_at', '<', sql<Date>`now()`)
    .returning('task_id')
    .execute();
  return rows.length;
}

/** Non-terminal tasks untouched for `olderThanSeconds`: candidates for the orphan check. */
export async function findStaleOpenTasks(
  db: Executor,
  olderThanSeconds: number,
  limit: number,
): Promise<Pick<TaskRow, 'task_id' | 'status'>[]> {
  return db
    .selectFrom('tasks')
    .select(['task_id', 'status'])
    .where('status', 'in', ['queued', 'running'])
    .where('updated_at', '<', sql<Date>`now() - make_interval(secs => ${olderThanSeconds})`)
    .orderBy('updated_at')
    .limit(limit)
    .execute();
}
