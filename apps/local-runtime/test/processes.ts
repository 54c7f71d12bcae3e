import { type ChildProcess, spawn } from 'node:child_process';

// Separate processes for the end-to-end tests: the built edge (apps/mcp-edge/dist) and the built local
// runtime (dist/index.js), each started as a user would, their log lines (pino JSON) collected so a test
// can wait for "tunnel connected" and read what was logged.

export interface Proc {
  child: ChildProcess;
  lines: string[];
  /** Resolves with the first log line (past or future) whose `msg` is `msg`, parsed. */
  waitFor(msg: string, timeoutMs?: number, since?: number): Promise<Record<string, unknown>>;
  /** SIGKILL, and wait for the exit: a crash, no shutdown of any kind. */
  kill(): Promise<void>;
  /** SIGTERM and wait for the exit (the graceful path). */
  stop(): Promise<number | null>;
}

export function start(script: string, args: string[], env: Record<string, string>): Proc {
  const child = spawn(process.execPath, [script, ...args], {
    // METRICS_PORT 0: processes started at once must not contend for an app's default operator port.
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', METRICS_PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  const listeners = new Set<() => void>();
  const onData = (chunk: Buffer) => {
    for (const line of chunk.toString('utf8').split('\n')) if (line.trim()) lines.push(line);
    for (const l of listeners) l();
  };
  child.stdout?.on('data', onData);
  child.stderr?.on('data', onData);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));

  function find(msg: string, since: number): Record<string, unknown> | undefined {
    for (const line of lines.slice(since)) {
      try {
        const parsed = JSON.parse(line) as Record<string, unknown>;
        if (parsed.msg === msg) return parsed;
      } catch {
        // not a log line
      }
    }
    return undefined;
  }

  return {
    child,
    lines,
    waitFor(msg, timeoutMs = 60_000, since = 0) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const hit = find(msg, since);
          if (!hit) return;
          cleanup();
          resolve(hit);
        };
        const timer = setTimeout(() => {
          cleanup();
          reject(new Error(`no "${msg}" within ${timeoutMs} ms; output:\n${lines.slice(-30).join('\n')}`));
        }, timeoutMs);
        const onExit = () => {
          cleanup();
          reject(new Error(`exited before "${msg}"; output:\n${lines.slice(-30).join('\n')}`));
        };
        function cleanup() {
          clearTimeout(timer);
          listeners.delete(check);
          child.off('exit', onExit);
        }
        listeners.add(check);
        child.once('exit', onExit);
        check();
      });
    },
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      return exited;
    },
  };
}
