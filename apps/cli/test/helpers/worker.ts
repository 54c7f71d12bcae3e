import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { TEST_REDIS_URL } from '@pkgreg/db/testing';

const WORKER_ENTRY = new URL('../../../runtime-worker/dist/index.js', import.meta.url).pathname;

export interface RunningWorker {
  output(): string;
  stop(): Promise<void>;
}

/**
 * The real runtime worker (`node apps/runtime-worker/dist/index.js`) taking the indexing queue under
 * `prefix` on the test's own database: where a publish's job runs. `env` adds to its environment.
 */
export async function startWorker(
  databaseUrl: string,
  prefix: string,
  env: Record<string, string> = {},
): Promise<RunningWorker> {
  const child: ChildProcess = spawn(process.execPath, [WORKER_ENTRY], {
    env: {
      PATH: process.env.PATH ?? '',
      NODE_ENV: 'test',
      LOG_LEVEL: 'info',
      DATABASE_URL: databaseUrl,
      REDIS_URL: TEST_REDIS_URL,
      QUEUE_PREFIX: prefix,
      INDEXING_ENABLED: 'true',
      // Nothing scheduled: the test's publishes are the only indexing.
      REINDEX_EVERY_MS: '0',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk) => {
    output += String(chunk);
  });
  child.stderr?.on('data', (chunk) => {
    output += String(chunk);
  });
  const deadline = Date.now() + 30_000;
  while (!output.includes('runtime-worker started')) {
    if (child.exitCode !== null) throw new Error(`runtime-worker exited (${child.exitCode}): ${output}`);
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`runtime-worker did not start: ${output}`);
    }
    await sleep(50);
  }
  return {
    output: () => output,
    async stop() {
      if (child.exitCode !== null) return;
      child.kill('SIGTERM');
      const exited = once(child, 'exit');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}
