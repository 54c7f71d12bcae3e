import type { Command } from 'commander';
import { z } from 'zod';
import { parseOptions } from './command-options.js';
import { type ResolvedRegistry, readConfig, resolveRegistry } from './config.js';
import { type Credentials, resolveCredentials } from './credentials.js';
import { type Env, loadEnv } from './env.js';
import { createRegistryClient, DEFAULT_RETRY, type RegistryClient } from './http-client.js';
import { jsonText, oneLine, terminalSafe } from './terminal-text.js';

const GlobalOptionsSchema = z.object({
  registry: z.string().optional(),
  verbose: z.boolean().default(false),
});

export interface Context {
  env: Env;
  registry: ResolvedRegistry;
  client: RegistryClient;
  /** The token requests to this registry carry (PKGREG_TOKEN or `pkgreg login`'s), if any. Never printed. */
  credentials: Credentials | undefined;
  verbose: boolean;
  /** Whether installs are counted (off with DO_NOT_TRACK or `"track": false` in config.json). */
  track: boolean;
  /** --verbose detail on stderr. */
  debug(line: string): void;
  /** A warning on stderr. */
  warn(line: string): void;
  /** One line of results on stdout. */
  out(line: string): void;
  /** A value as JSON on stdout (--json): the registry's strings exactly, no raw control character. */
  json(value: unknown): void;
}

export async function createContext(command: Command): Promise<Context> {
  const globals = parseOptions(GlobalOptionsSchema, command.optsWithGlobals());
  const env = loadEnv();
  const config = await readConfig(env);
  const registry = resolveRegistry(globals.registry, env, config);
  // Every line goes through terminalSafe: registry strings never reach the terminal as controls.
  const debug = globals.verbose
    ? (line: string) => process.stderr.write(`pkgreg: ${terminalSafe(line)}\n`)
    : () => {};
  debug(`registry ${registry.url} (from ${registry.source})`);
  const warn = (line: string) => process.stderr.write(`warning: ${oneLine(line)}\n`);
  const credentials = await resolveCredentials(env, registry.url, warn);
  if (credentials) debug(`credentials: a token from ${credentials.source}`);
  const client = createRegistryClient({
    baseUrl: registry.url,
    timeoutMs: env.timeoutMs,
    retry: DEFAULT_RETRY,
    debug,
    credentials,
  });
  return {
    env,
    registry,
    client,
    credentials,
    verbose: globals.verbose,
    track: !env.doNotTrack && config.track !== false,
    debug,
    warn,
    out: (line) => process.stdout.write(`${terminalSafe(line)}\n`),
    json: (value) => process.stdout.write(`${jsonText(value)}\n`),
  };
}
