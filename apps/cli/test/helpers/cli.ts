import { execFile } from 'node:child_process';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const CLI_ENTRY = new URL('../../dist/index.js', import.meta.url).pathname;

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface RunOptions {
  cwd: string;
  /** HOME of the run; always a throwaway folder so no test reads the real user's config. */
  home: string;
  env?: Record<string, string>;
  timeoutMs?: number;
}

/** Runs `node dist/index.js` as a real process (the built bundle, what npm publishes). */
export function runCli(args: string[], options: RunOptions): Promise<CliResult> {
  return runBinary(process.execPath, [CLI_ENTRY, ...args], options);
}

export function runBinary(file: string, args: string[], options: RunOptions): Promise<CliResult> {
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: options.home,
    ...options.env,
  };
  return new Promise((resolve) => {
    execFile(
      file,
      args,
      { cwd: options.cwd, env, timeout: options.timeoutMs ?? 60_000 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0;
        resolve({ code, stdout: String(stdout), stderr: String(stderr) });
      },
    );
  });
}

export async function tempDir(label: string): Promise<string> {
  return mkdtemp(join(tmpdir(), `pkgreg-cli-${label}-`));
}
