import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';

// startService (service.ts): the start-up and shutdown the three apps' index.ts share. Signals, a second
// signal and the grace itself are onShutdown's (shutdown.test.ts); here, what the helper adds around it.

const CHILD = fileURLToPath(new URL('./fixtures/service-child.mjs', import.meta.url));
const started: ChildProcess[] = [];

afterEach(() => {
  for (const child of started.splice(0))
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
});

/** Starts the child, waits for its `ready <metrics port>` line; `exit` resolves with its output. */
async function start(...args: string[]) {
  const child = spawn(process.execPath, ['--no-warnings', CHILD, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  started.push(child);
  let out = '';
  let err = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    err += chunk.toString();
  });
  const exit = once(child, 'exit').then(([code]) => ({ code: code as number | null, out }));
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const ready = /MARK ready (\d+)/.exec(out);
      if (ready) resolve(Number(ready[1]));
    });
    exit.then(() => reject(new Error(`exited before ready:\n${out}\n${err}`)));
  });
  return { child, port, exit };
}

describe('startService (server-kit service.ts)', () => {
  it('serves the metrics registry on the operator port; on SIGTERM closes the app, then what it opened, exits 0', async () => {
    const { child, port, exit } = await start();
    const scrape = await fetch(`http://127.0.0.1:${port}/metrics`);
    expect(scrape.status).toBe(200);
    // prom-client's process metrics are in the registry the helper made.
    expect(await scrape.text()).toContain('process_cpu_user_seconds_total');
    child.kill('SIGTERM');
    const { code, out } = await exit;
    expect(code).toBe(0);
    expect(out).toContain('"name":"service-child"');
    expect(out).toContain('"msg":"shutting down"');
    const lines = out.split('\n').filter((l) => l.startsWith('MARK'));
    expect(lines.slice(1)).toEqual([
      'MARK close-start',
      'MARK metrics-during-close 200',
      'MARK close-done',
      'MARK redis quit',
      'MARK ended db=true pool=true',
    ]);
  });

  it('the grace it is given holds: a close slower than it exits 1', async () => {
    const { child, exit } = await start('30000', '300');
    child.kill('SIGTERM');
    const { code, out } = await exit;
    expect(code).toBe(1);
    expect(out).toContain('shutdown took too long');
    expect(out).not.toContain('close-done');
  });
});
