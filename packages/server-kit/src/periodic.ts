import type { Logger } from './logger.js';
import { outageMonitorOf } from './outage.js';

export interface PeriodicTask {
  /** Stops the timer and waits for a tick still running. */
  stop(): Promise<void>;
}

/**
 * Runs `tick` every `intervalMs` in the background: never two at once (a tick still running skips the
 * next one), a failure is logged with `failureMessage` (a dependency outage only once, by
 * outageMonitorOf) and the next tick tries again, and the timer does not keep the process alive.
 */
export function startPeriodic(
  tick: () => Promise<unknown>,
  options: { intervalMs: number; logger: Logger; failureMessage: string },
): PeriodicTask {
  let running: Promise<unknown> | undefined;
  let stopped = false;
  const timer = setInterval(() => {
    if (running || stopped) return;
    running = tick()
      .catch((error: unknown) => {
        // A dependency outage is logged once by the process's monitor, not on every tick it lasts.
        if (outageMonitorOf(options.logger).failed(error)) return;
        options.logger.warn({ err: error }, options.failureMessage);
      })
      .finally(() => {
        running = undefined;
      });
  }, options.intervalMs);
  timer.unref();
  return {
    async stop() {
      stopped = true;
      clearInterval(timer);
      await running;
    },
  };
}
