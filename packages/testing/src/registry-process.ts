import { randomBytes } from 'node:crypto';
import { type ServerProcess, startServerProcess } from './server-process.js';

// The real registry-api as a child process, for the tests of what talks to it over HTTP (the CLI, the
// edge, the worker, the agents, the web UI). The caller names the built server file: this package
// depends on no app, and the caller's own devDependency on the registry-api is what has it built first.

export interface RegistryProcessOptions {
  /** The built server (apps/registry-api/dist/index.js). */
  entry: string;
  databaseUrl: string;
  redisUrl: string;
  /** Added to (or overriding) the registry's environment. */
  env?: Record<string, string>;
  /** A free one unless given. */
  port?: number;
  cwd?: string;
}

/** The registry as a running process (ServerProcess, server-process.ts). */
export type RegistryProcess = ServerProcess;

/**
 * Starts the registry on 127.0.0.1 and resolves once it holds its port and its `/readyz` answers 200.
 * Its Redis keys and its indexing queue get prefixes of their own (REDIS_KEY_PREFIX, QUEUE_PREFIX) unless
 * `env` names them: test files sign in side by side from one address, and must not share the registry's
 * sign-in counters, nor hand their jobs to a worker of another test (or of `npm run dev`).
 */
export function startRegistry(options: RegistryProcessOptions): Promise<RegistryProcess> {
  const own = randomBytes(4).toString('hex');
  return startServerProcess({
    name: 'registry-api',
    entry: options.entry,
    hostVariable: 'REGISTRY_HOST',
    portVariable: 'REGISTRY_PORT',
    env: {
      DATABASE_URL: options.databaseUrl,
      REDIS_URL: options.redisUrl,
      REDIS_KEY_PREFIX: `pkgreg-test:registry:${own}:`,
      QUEUE_PREFIX: `pkgreg-test:registry-queue:${own}`,
      ...options.env,
    },
    ...(options.port !== undefined ? { port: options.port } : {}),
    ...(options.cwd !== undefined ? { cwd: options.cwd } : {}),
  });
}
