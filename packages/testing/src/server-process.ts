import { type ChildProcess, spawn } from 'node:child_process';
import { freePort } from './free-port.js';
import { until } from './until.js';

// One of our servers (the registry-api, the MCP edge) as a child process on 127.0.0.1, for the tests of
// what only a real process shows: signals, shutdown, talking to it over HTTP from another app's tests.

export interface ServerProcessOptions {
  /** Named in errors: `registry-api exited (1): …`. */
  name: string;
  /** The built server (apps/…/dist/index.js). */
  entry: string;
  /** The server's settings for its address: `REGISTRY_HOST` and `_PORT`, `EDGE_HOST` and `_PORT`. */
  hostVariable: string;
  portVariable: string;
  /**
   * Added to (or overriding) its environment: PATH, NODE_ENV=test, LOG_LEVEL=warn, the address and
   * METRICS_PORT=0.
   */
  env?: Record<string, string>;
  /** A free one unless given. */
  port?: number;
  cwd?: string;
}

export interface ServerProcess {
  url: string;
  port: number;
  child: ChildProcess;
  /** The environment it runs with (for a command of the server's on the same database). */
  env: Record<string, string>;
  /** What the process wrote to stdout and stderr (the last part of it). */
  output(): string;
  /** Sends `signal` (SIGTERM unless given; SIGKILL after 10 s) and resolves with the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

const KEPT_OUTPUT = 16_000;

/**
 * Starts the server and resolves once it says it holds its port and its `/readyz` answers 200. A free
 * port can be taken by another process between freePort() and the server's bind (test files start
 * servers side by side): another server's `/readyz` would then answer for it, so the server's own word is
 * waited for (`process.send('ready')` once listening), and a port lost that way is given up for another
 * free one.
 */
export async function startServerProcess(options: ServerProcessOptions): Promise<ServerProcess> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnce(options, options.port ?? (await freePort()));
    } catch (error) {
      if (!(error instanceof PortTaken) || options.port !== undefined || attempt === 3) throw error;
    }
  }
}

class PortTaken extends Error {}

async function startOnce(options: ServerProcessOptions, port: number): Promise<ServerProcess> {
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '',
    NODE_ENV: 'test',
    LOG_LEVEL: 'warn',
    [options.hostVariable]: '127.0.0.1',
    [options.portVariable]: String(port),
    // Several servers start at once across test files: none may contend for the operator port.
    METRICS_PORT: '0',
    ...options.env,
  };
  const child = spawn(process.execPath, [options.entry], {
    ...(options.cwd ? { cwd: options.cwd } : {}),
    env,
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  });
  let output = '';
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-KEPT_OUTPUT);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const url = `http://127.0.0.1:${port}`;
  let listening = false;
  child.once('message', (message) => {
    listening = message === 'ready';
    // The channel is needed for this one message: it must not keep the test process alive. Unref'd, not
    // disconnected: a child whose channel the parent closed never emits 'close'.
    child.channel?.unref();
  });
  try {
    await until(
      async () => {
        if (child.exitCode !== null) {
          const message = `${options.name} exited (${child.exitCode}): ${output}`;
          throw output.includes('EADDRINUSE') ? new PortTaken(message) : new Error(message);
        }
        if (!listening) return false;
        return fetch(`${url}/readyz`).then(
          (r) => r.ok,
          () => false,
        );
      },
      `the ${options.name} to be ready`,
      30_000,
    );
  } catch (error) {
    child.kill('SIGKILL');
    if (error instanceof PortTaken) throw error;
    throw new Error(`${(error as Error).message}\n${output}`);
  }
  return {
    url,
    port,
    child,
    env,
    output: () => output,
    async stop(signal = 'SIGTERM') {
      if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
      child.kill(signal);
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
  };
}
