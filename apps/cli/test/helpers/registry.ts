import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { TEST_REDIS_URL } from '@pkgreg/db/testing';

const REGISTRY_ENTRY = new URL('../../../registry-api/dist/index.js', import.meta.url).pathname;

export interface RunningRegistry {
  url: string;
  port: number;
  stop(): Promise<void>;
}

/** A port nobody listens on right now (the registry takes it a moment later). */
export async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  server.close();
  await once(server, 'close');
  return port;
}

/**
 * Starts the real registry-api (`node apps/registry-api/dist/index.js`) on the test's own database;
 * `env` adds to (or overrides) its environment.
 */
export async function startRegistry(
  databaseUrl: string,
  env: Record<string, string> = {},
): Promise<RunningRegistry> {
  const port = await freePort();
  const child: ChildProcess = spawn(process.execPath, [REGISTRY_ENTRY], {
    env: {
      PATH: process.env.PATH ?? '',
      NODE_ENV: 'test',
      LOG_LEVEL: 'warn',
      DATABASE_URL: databaseUrl,
      REDIS_URL: TEST_REDIS_URL,
      REGISTRY_HOST: '127.0.0.1',
      REGISTRY_PORT: String(port),
      // The detail micro-cache (1 s by default) would hide a re-index from the very next CLI call.
      DETAIL_CACHE_TTL_MS: '0',
      // Every test registry counts in the same Redis keys, from 127.0.0.1, run after run: publishing's
      // limits (registry-api's tests try them) would soon refuse the tests' own publishes.
      PUBLISHES_PER_HOUR: '100000',
      WEBHOOK_DELIVERIES_PER_REPOSITORY_PER_HOUR: '100000',
      ...env,
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (chunk) => {
    stderr += String(chunk);
  });
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`registry-api exited (${child.exitCode}): ${stderr}`);
    try {
      const response = await fetch(`${url}/readyz`);
      if (response.ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`registry-api did not become ready: ${stderr}`);
    }
    await sleep(100);
  }
  return {
    url,
    port,
    async stop() {
      if (child.exitCode !== null) return;
      child.kill('SIGTERM');
      const exited = once(child, 'exit');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(timer);
    },
  };
}
