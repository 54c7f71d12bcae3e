import { setTimeout as sleep } from 'node:timers/promises';

type Unmet = false | null | undefined;

/**
 * Polls `check` until it returns something other than false, null or undefined, and resolves with that
 * value: for work the code under test finishes in the background (a queue, a flusher, a refresh).
 * Rejects naming `what` once `timeoutMs` has passed, so a wait that never ends fails the test.
 */
export async function until<T>(
  check: () => Promise<T | Unmet> | T | Unmet,
  what = 'a condition',
  timeoutMs = 15_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== false && value !== null && value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(25);
  }
}
