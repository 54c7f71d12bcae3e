#!/usr/bin/env node
import { CommanderError } from 'commander';
import { CliError, EXIT, type ExitCode } from './errors.js';
import { createProgram } from './program.js';
import { oneLine, terminalSafe } from './terminal-text.js';

const verbose = process.argv.includes('--verbose');

// `pkgreg search x --json | head -1` closes stdout early: that is the reader's choice, not an error.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EPIPE') process.exit(process.exitCode ?? 0);
  throw error;
});

function exitCodeFor(error: unknown): ExitCode {
  if (error instanceof CommanderError) {
    // Commander has already printed its message (or the help / version text).
    // Help asked for (--help, `help <command>`) and --version exit 0; help shown for a bare `pkgreg` is usage.
    if (error.exitCode === 0) return EXIT.ok;
    return EXIT.usage;
  }
  // Errors are one line (they may quote the registry's message): no control character, no forged line.
  if (error instanceof CliError) {
    process.stderr.write(`error: ${oneLine(error.message)}\n`);
    if (verbose && error.detail) process.stderr.write(`${terminalSafe(error.detail)}\n`);
    return error.exitCode;
  }
  const message = error instanceof Error ? error.message : String(error);
  process.stderr.write(`error: ${oneLine(message)}\n`);
  if (verbose && error instanceof Error && error.stack)
    process.stderr.write(`${terminalSafe(error.stack)}\n`);
  return EXIT.error;
}

try {
  await createProgram().parseAsync(process.argv);
} catch (error) {
  process.exitCode = exitCodeFor(error);
}
