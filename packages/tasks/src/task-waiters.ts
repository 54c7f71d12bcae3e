// Waiters for the end of a task's job, shared by the BullMQ events (queue.ts) and the in-process runner
// (in-process.ts): a wait resolves when the job ends or its timeout passes, whichever comes first.

export interface TaskWaiters {
  waitFor(taskId: string, timeoutMs: number): { promise: Promise<void>; cancel(): void };
  /** Wakes every waiter of `taskId`. */
  wake(taskId: string): void;
  /** Wakes every waiter. */
  wakeAll(): void;
}

export function createTaskWaiters(): TaskWaiters {
  const waiters = new Map<string, Set<() => void>>();
  return {
    waitFor(taskId, timeoutMs) {
      let done: () => void = () => {};
      let timer: NodeJS.Timeout | undefined;
      const promise = new Promise<void>((resolve) => {
        done = () => {
          if (timer) clearTimeout(timer);
          waiters.get(taskId)?.delete(done);
          if (waiters.get(taskId)?.size === 0) waiters.delete(taskId);
          resolve();
        };
        timer = setTimeout(done, Math.max(0, timeoutMs));
        let set = waiters.get(taskId);
        if (!set) {
          set = new Set();
          waiters.set(taskId, set);
        }
        set.add(done);
      });
      return { promise, cancel: () => done() };
    },
    wake(taskId) {
      const set = waiters.get(taskId);
      if (!set) return;
      waiters.delete(taskId);
      for (const fn of set) fn();
    },
    wakeAll() {
      for (const set of [...waiters.values()]) for (const fn of [...set]) fn();
    },
  };
}
