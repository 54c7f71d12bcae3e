import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';

// STYLE.md §4 and §11: index.ts handles shutdown; graceful close on SIGTERM. onShutdown's doc: a second
// signal, or a close slower than graceMs, exits at once (code 1).

const CHILD = fileURLToPath(new URL('./fixtures/shutdown-child.mjs', import.meta.url));

interface Run {
  child: ChildProcess;
  stdout: () => string;
  waitFor: (mark: string) => Promise<void>;
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null; ms: number }>;
}

const started: ChildProcess[] = [];

function run(...args: string[]): Run {
  const child = spawn(process.execPath, ['--no-warnings', CHILD, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  started.push(child);
  let out = '';
  let t0 = 0;
  const waiters: { mark: string; resolve: () => void }[] = [];
  child.stdout?.on('data', (chunk: Buffer) => {
    out += chunk.toString();
    for (const w of waiters.filter((x) => out.includes(`MARK ${x.mark}`))) w.resolve();
  });
  let err = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    err += chunk.toString();
  });
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null; ms: number }>((resolve) => {
    child.on('exit', (code, signal) => resolve({ code, signal, ms: Date.now() - t0 }));
  });
  return {
    child,
    stdout: () => out,
    waitFor: (mark) =>
      new Promise<void>((resolve, reject) => {
        if (out.includes(`MARK ${mark}`)) return resolve();
        const timer = setTimeout(() => reject(new Error(`no "${mark}" in:\n${out}\n${err}`)), 10_000);
        waiters.push({
          mark,
          resolve: () => {
            clearTimeout(timer);
            t0 = t0 || Date.now();
            resolve();
          },
        });
      }),
    exit: exit.then((r) => ({ ...r, ms: Date.now() - (t0 || Date.now()) })),
  };
}

afterEach(() => {
  for (const child of started.splice(0))
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
});

// Each test starts a node process: on a loaded machine that alone can take longer than vitest's default
// 5 s. What each test checks is told by exit codes and marks, not by how long it took.
describe('onShutdown (STYLE.md §4, §11: graceful close on SIGTERM)', { timeout: 30_000 }, () => {
  it.each(['SIGTERM', 'SIGINT'] as const)('%s runs close once and exits 0', async (signal) => {
    const r = run('50');
    await r.waitFor('ready');
    r.child.kill(signal);
    const { code, signal: killedBy } = await r.exit;
    expect(killedBy).toBeNull();
    expect(code).toBe(0);
    expect(r.stdout()).toContain('MARK close-start 1');
    expect(r.stdout()).toContain('MARK close-done');
    expect(r.stdout()).not.toContain('close-start 2');
    // The shutdown is logged, as JSON from the shared logger.
    expect(r.stdout()).toContain('"msg":"shutting down"');
  });

  it.each([
    ['SIGTERM', 'SIGTERM'],
    ['SIGTERM', 'SIGINT'],
    ['SIGINT', 'SIGINT'],
  ] as const)(
    'a second signal (%s then %s) exits 1 at once, without a second close',
    async (first, second) => {
      const r = run('30000');
      await r.waitFor('ready');
      r.child.kill(first);
      await r.waitFor('close-start 1');
      r.child.kill(second);
      const { code, signal } = await r.exit;
      expect(signal).toBeNull();
      // Exit 1 with no close-done: the second signal ended it, not the 30 s close.
      expect(code).toBe(1);
      expect(r.stdout()).not.toContain('close-done');
      expect(r.stdout()).not.toContain('close-start 2');
    },
  );

  it('a close slower than graceMs exits 1 after the grace period', async () => {
    const r = run('30000', '300');
    await r.waitFor('ready');
    r.child.kill('SIGTERM');
    const { code, ms } = await r.exit;
    // The grace timer ended it (its message says so, the 30 s close never finished), not before its time.
    expect(code).toBe(1);
    expect(ms).toBeGreaterThanOrEqual(250);
    expect(r.stdout()).toContain('shutdown took too long');
    expect(r.stdout()).not.toContain('close-done');
  });

  it('a close that fails exits 1', async () => {
    const r = run('10', '10000', 'reject');
    await r.waitFor('ready');
    r.child.kill('SIGTERM');
    const { code } = await r.exit;
    expect(code).toBe(1);
    expect(r.stdout()).toContain('shutdown failed');
  });
});
