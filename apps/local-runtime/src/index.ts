#!/usr/bin/env node
import { readFileSync } from 'node:fs';
import { createLogger, onShutdown } from '@pkgreg/server-kit';
import { Command, InvalidArgumentError } from 'commander';
import { type ConfigFlags, loadConfig } from './env.js';
import { startLocalRuntime } from './local-runtime.js';

// `pkgreg-runtime local`: the local runtime of one tunnel session. Flags override the environment
// variables they name (env.ts). The secret is taken from the environment or a file, never a flag: a
// command line is visible to every user of the machine (ps).

interface LocalOptions {
  edge?: string;
  sessionId?: string;
  client?: string[];
  serveOwners?: boolean;
  secretFile?: string;
  dataDir?: string;
  databaseUrl?: string;
  port?: string;
  host?: string;
  logLevel?: string;
}

function readSecretFile(path: string): string {
  try {
    return readFileSync(path, 'utf8').trim();
  } catch (error) {
    throw new InvalidArgumentError(
      `cannot read ${path}: ${(error as NodeJS.ErrnoException).code ?? 'error'}`,
    );
  }
}

async function runLocal(opts: LocalOptions): Promise<void> {
  const flags: ConfigFlags = {
    PKGREG_EDGE_URL: opts.edge,
    PKGREG_TUNNEL_SESSION_ID: opts.sessionId,
    PKGREG_TUNNEL_CLIENTS: opts.client?.join(','),
    PKGREG_TUNNEL_SERVE_OWNERS: opts.serveOwners ? 'true' : undefined,
    PKGREG_TUNNEL_SECRET: opts.secretFile ? readSecretFile(opts.secretFile) : undefined,
    PKGREG_RUNTIME_DATA_DIR: opts.dataDir,
    DATABASE_URL: opts.databaseUrl,
    PKGREG_RUNTIME_PORT: opts.port,
    PKGREG_RUNTIME_HOST: opts.host,
    LOG_LEVEL: opts.logLevel,
  };
  let config: ReturnType<typeof loadConfig>;
  try {
    config = loadConfig(flags);
  } catch (error) {
    console.error((error as Error).message);
    process.exit(2);
  }
  const logger = createLogger('pkgreg-runtime', config.logLevel);
  process.on('unhandledRejection', (reason) => logger.error({ err: reason }, 'unhandled rejection'));
  let running: Awaited<ReturnType<typeof startLocalRuntime>>;
  try {
    running = await startLocalRuntime(config, logger, {
      onReplaced: () => process.kill(process.pid, 'SIGTERM'),
    });
  } catch (error) {
    logger.fatal({ err: error }, 'local runtime could not start');
    process.exit(1);
  }
  onShutdown(logger, () => running.close(), 15_000);
}

const program = new Command('pkgreg-runtime')
  .description('pkgreg local runtime: serves an MCP edge tunnel session from this machine')
  .showHelpAfterError();

program
  .command('local')
  .description(
    'run the local runtime of a tunnel session (dials out to the edge; no inbound connection needed)',
  )
  .option('--edge <url>', "the edge's base URL (PKGREG_EDGE_URL)")
  .option('--session-id <id>', 'the tunnel session id (PKGREG_TUNNEL_SESSION_ID)')
  .option(
    '--client <id>',
    'a client this runtime serves, repeatable: its id, or app:<namespace> (PKGREG_TUNNEL_CLIENTS)',
    (value: string, previous: string[] = []) => [...previous, value],
  )
  .option(
    '--serve-owners',
    "also serve the session's owner (a person, or an organisation's members) with any app they signed in with (PKGREG_TUNNEL_SERVE_OWNERS)",
  )
  .option('--secret-file <path>', 'a file holding the session secret (else PKGREG_TUNNEL_SECRET)')
  .option('--data-dir <dir>', 'embedded store folder (PKGREG_RUNTIME_DATA_DIR; default under $XDG_DATA_HOME)')
  .option('--database-url <url>', 'a PostgreSQL of your own instead of the embedded store (DATABASE_URL)')
  .option(
    '--port <port>',
    'also serve POST /tunnel/mcp here, for a session with a target (PKGREG_RUNTIME_PORT)',
  )
  .option('--host <host>', 'address of that listener (PKGREG_RUNTIME_HOST, default 127.0.0.1)')
  .option('--log-level <level>', 'fatal, error, warn, info, debug, trace or silent (LOG_LEVEL)')
  .action((opts: LocalOptions) => runLocal(opts));

await program.parseAsync(process.argv);
