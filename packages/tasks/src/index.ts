// @pkgreg/tasks: task rows, their check-and-set transitions, and the runtime job queue.
// The edge submits and polls; the runtime worker starts, completes and fails. A local runtime runs the
// same jobs in its own process (in-process.ts).

export { type InProcessHandlers, type InProcessJobsOptions, startInProcessJobs } from './in-process.js';
export { PermanentJobError, toTaskError } from './job-errors.js';
export {
  connectionOptions,
  createRuntimeQueue,
  createTaskEvents,
  DEFAULT_QUEUE_PREFIX,
  type EnqueueOptions,
  openQueueJobs,
  type RedisConnection,
  type RuntimeQueue,
  type RuntimeQueueOptions,
  type TaskEvents,
  type TaskJobs,
  type TaskQueue,
} from './queue.js';
export { findTaskById, isTerminal, type TaskRow } from './task.repository.js';
export {
  completeTask,
  DEFAULT_POLL_WINDOW_SECONDS,
  DEFAULT_SYNC_THRESHOLD_MS,
  failOrphanedTasks,
  failTask,
  getTaskRecord,
  getTaskResult,
  purgeExpiredTasks,
  type StartOutcome,
  type SubmitDeps,
  startTask,
  submitCompact,
  submitInvoke,
  type TaskError,
  type TaskResult,
  toTaskRecord,
  waitForTask,
} from './task.service.js';
export {
  STATUS_INTERVAL_MS,
  setTaskStatusMessage,
  type TaskStatusWriter,
  taskStatusWriter,
} from './task-status.js';
