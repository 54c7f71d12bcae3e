import { TASK_STATUS_MESSAGE_MAX_LENGTH } from '@pkgreg/contracts';
import type { Db } from '@pkgreg/db';
import { updateStatusMessage } from './task.repository.js';

// A running task's status message (tasks/get's `statusMessage`, docs/agent.md "Progress"): what the run
// is doing now. A run reports several steps a second at times (a model answer with four tool calls), and
// each would be a row update, so a run writes at most one every STATUS_INTERVAL_MS: a message that comes
// sooner waits for the interval's end, replaced by any later one, and the task shows the latest within it.

/** A run's status messages are written at most this often (ms). */
export const STATUS_INTERVAL_MS = 250;

/** Writes `message` on the task while it runs; false when the task is not running (nothing written). */
export function setTaskStatusMessage(db: Db, taskId: string, message: string): Promise<boolean> {
  const cut =
    message.length > TASK_STATUS_MESSAGE_MAX_LENGTH
      ? `${message.slice(0, TASK_STATUS_MESSAGE_MAX_LENGTH - 1)}…`
      : message;
  return updateStatusMessage(db, taskId, cut);
}

export interface TaskStatusWriter {
  /** The run's latest message: written now, or at the end of the current interval. */
  update(message: string): Promise<void>;
  /** The run is over: a message still waiting is dropped (the task's end clears the message anyway). */
  close(): void;
}

/** One run's status writer (one per job delivery). */
export function taskStatusWriter(db: Db, taskId: string, intervalMs = STATUS_INTERVAL_MS): TaskStatusWriter {
  let writtenAt = Number.NEGATIVE_INFINITY;
  let waiting: string | undefined;
  let timer: NodeJS.Timeout | undefined;
  let closed = false;

  const write = async (message: string) => {
    writtenAt = Date.now();
    await setTaskStatusMessage(db, taskId, message);
  };

  return {
    async update(message) {
      if (closed) return;
      const due = writtenAt + intervalMs - Date.now();
      if (due <= 0 && timer === undefined) {
        await write(message);
        return;
      }
      waiting = message;
      timer ??= setTimeout(() => {
        timer = undefined;
        const next = waiting;
        waiting = undefined;
        // Best effort, as every progress write: one that fails leaves the previous message standing.
        if (next !== undefined && !closed) write(next).catch(() => {});
      }, due);
    },
    close() {
      closed = true;
      clearTimeout(timer);
      timer = undefined;
    },
  };
}
