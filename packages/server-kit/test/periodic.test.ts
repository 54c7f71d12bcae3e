import { setTimeout as sleep } from 'node:timers/promises';
import { captureLogs } from '@pkgreg/testing';
import { describe, expect, it, vi } from 'vitest';
import { createLogger, startPeriodic } from '../src/index.js';

function capturedLogger() {
  const logs = captureLogs();
  return { logger: createLogger('test', 'warn', logs.destination), lines: logs.lines };
}

describe('startPeriodic (background loops of the API processes)', () => {
  it('never runs two ticks at once, logs a failure and goes on, and stop() waits for the running tick', async () => {
    const { logger, lines } = capturedLogger();
    let active = 0;
    let maxActive = 0;
    let ticks = 0;
    let finished = 0;
    const task = startPeriodic(
      async () => {
        ticks += 1;
        active += 1;
        maxActive = Math.max(maxActive, active);
        await sleep(30); // longer than the interval: the ticks in between are skipped
        active -= 1;
        finished += 1;
        if (ticks === 1) throw new Error('first tick fails');
      },
      { intervalMs: 5, logger, failureMessage: 'loop failed' },
    );
    // Wait for the second tick to begin rather than a fixed time: a loaded machine delays timers.
    await vi.waitFor(() => expect(ticks).toBeGreaterThanOrEqual(2), { timeout: 10_000, interval: 10 });
    await task.stop();
    expect(maxActive).toBe(1);
    expect(ticks).toBeGreaterThanOrEqual(2);
    expect(finished).toBe(ticks); // stop() returned only after the running tick ended
    expect(lines.some((l) => l.includes('loop failed') && l.includes('first tick fails'))).toBe(true);
    const after = ticks;
    await sleep(30);
    expect(ticks).toBe(after);
  });
});
