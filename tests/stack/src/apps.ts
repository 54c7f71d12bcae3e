import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { deriveNamespace } from '@pkgreg/contracts';
import { createDb, migrateToLatest, quoteIdent } from '@pkgreg/db';
import { freePort } from '@pkgreg/testing';
import { Redis } from 'ioredis';
import pg from 'pg';
import { request } from 'undici';

// The built apps (apps/*/dist/index.js) as separate processes, started the way an operator starts them:
// a database and Redis given by URL, settings by environment, log lines (pino JSON) on stdout. The
// processes can be stopped (SIGTERM), killed (SIGKILL) and started again on the same port.

const root = (path: string) => fileURLToPath(new URL(`../../../${path}`, import.meta.url));

export const ENTRIES = {
  'registry-api': root('apps/registry-api/dist/index.js'),
  'mcp-edge': root('apps/mcp-edge/dist/index.js'),
  'runtime-worker': root('apps/runtime-worker/dist/index.js'),
} as const;
const CLIS = {
  registry: root('apps/registry-api/dist/cli.js'),
  edge: root('apps/mcp-edge/dist/cli.js'),
} as const;

export type AppName = keyof typeof ENTRIES;

/** The public base URL every edge of a stack shares (as behind one load balancer): tokens name it. */
export const EDGE_PUBLIC_BASE = 'http://localhost:4100';

/** The memory namespace the edge gives a client's tokens: the edge's own derivation (@pkgreg/contracts). */
export function memoryNamespaceOf(client: { clientId: string }): string {
  return deriveNamespace(`${EDGE_PUBLIC_BASE}/mcp`, client.clientId);
}

/** The local PostgreSQL and Redis the tests use unless told otherwise. */
export const DEFAULT_ADMIN_DATABASE_URL =
  process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
export const DEFAULT_REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

/** Where a spawned app finds its services, and its own queue prefix within the shared Redis. */
export interface Services {
  databaseUrl: string;
  redisUrl: string;
  /** BullMQ prefix shared by the apps of one stack (QUEUE_PREFIX, EDGE_QUEUE_PREFIX). */
  queuePrefix: string;
}

export interface AppProcess {
  readonly app: AppName;
  /** A label for messages (`registry-api#2`). */
  readonly label: string;
  /** `http://127.0.0.1:<port>` for the HTTP apps; the worker has none. */
  readonly url: string | undefined;
  /** Every output line of every run of this process (pino JSON, or anything else it printed). */
  readonly lines: string[];
  readonly child: ChildProcess;
  /** True while the current run has not exited. */
  readonly running: boolean;
  /** Resolves once the current run serves (`/readyz` 200, or the worker's start line of this run). */
  ready(timeoutMs?: number): Promise<void>;
  /** Resolves with the first parsed log line at or after `since` (a line index) whose `msg` is `msg`. */
  waitForLog(msg: string, options?: { since?: number; timeoutMs?: number }): Promise<Record<string, unknown>>;
  /** SIGTERM (the graceful path) and the exit code. */
  stop(): Promise<number | null>;
  /** SIGKILL: a crash, no shutdown of any kind. */
  kill(): Promise<void>;
  /** Starts the process again with the same environment and port, and waits until it is ready. */
  restart(): Promise<void>;
}

/** What each app needs to run against `services` on `port`, quietly fast for tests. */
function appEnv(app: AppName, services: Services, port: number): Record<string, string> {
  const common = {
    NODE_ENV: 'test',
    LOG_LEVEL: 'info',
    DATABASE_URL: services.databaseUrl,
    REDIS_URL: services.redisUrl,
    // The stack's own keys (the API's sign-in and download counters, the edge's rate limits): shared by
    // its processes, as one deployment's are, apart from every other test's.
    REDIS_KEY_PREFIX: `${services.queuePrefix}:keys:`,
    // Several processes of an app on one machine: each its own free metrics port.
    METRICS_PORT: '0',
  };
  switch (app) {
    case 'registry-api':
      return {
        ...common,
        REGISTRY_HOST: '127.0.0.1',
        REGISTRY_PORT: String(port),
        QUEUE_PREFIX: services.queuePrefix,
        DERIVED_REFRESH_INTERVAL_MS: '200',
        DOWNLOAD_FLUSH_INTERVAL_MS: '100',
        // Every load lane tracks from 127.0.0.1: one address, far past production's per-address limit.
        TRACK_PER_MINUTE: '10000000',
      };
    case 'mcp-edge':
      return {
        ...common,
        EDGE_HOST: '127.0.0.1',
        EDGE_PORT: String(port),
        PKGREG_PUBLIC_BASE_URL: EDGE_PUBLIC_BASE,
        EDGE_QUEUE_PREFIX: services.queuePrefix,
        EDGE_AUDIT_FLUSH_MS: '50',
      };
    case 'runtime-worker':
      return {
        ...common,
        QUEUE_PREFIX: services.queuePrefix,
        INDEXING_ENABLED: 'false',
        // A killed worker's job is taken back within seconds, not after production's lock duration.
        LOCK_DURATION_MS: '3000',
        STALLED_INTERVAL_MS: '1000',
        SHUTDOWN_GRACE_MS: '20000',
      };
  }
}

let counter = 0;

/**
 * Starts the built `app` on `services` (and an ephemeral port for the HTTP apps) with `env` on top of
 * the defaults, and waits until it is ready. Restarts keep the port and the environment.
 */
export async function spawnApp(
  app: AppName,
  services: Services,
  env: Record<string, string> = {},
): Promise<AppProcess> {
  counter += 1;
  const label = `${app}#${counter}`;
  const port = app === 'runtime-worker' ? 0 : await freePort();
  const url = app === 'runtime-worker' ? undefined : `http://127.0.0.1:${port}`;
  const fullEnv = {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '/tmp',
    ...appEnv(app, services, port),
    ...env,
  };
  const lines: string[] = [];
  const listeners = new Set<() => void>();
  let child!: ChildProcess;
  let exited!: Promise<void>;
  /** Index in `lines` of the current run's first line. */
  let runStart = 0;
  /**
   * The current run said it holds its port (`process.send('ready')`): until then a `/readyz` that answers
   * may be another process's, one that took the port between freePort() and this run's bind.
   */
  let listening = false;

  function start(): void {
    runStart = lines.length;
    listening = false;
    child = spawn(process.execPath, [ENTRIES[app]], {
      env: fullEnv,
      // The HTTP apps say when they listen; the worker has no port.
      stdio: url ? ['ignore', 'pipe', 'pipe', 'ipc'] : ['ignore', 'pipe', 'pipe'],
    });
    const run = child;
    run.once('message', (message) => {
      listening = message === 'ready';
      // The channel is needed for this one message: it must not keep the test process alive. Unref'd, not
      // disconnected: a child whose channel the parent closed never emits 'close'.
      run.channel?.unref();
    });
    for (const stream of [child.stdout, child.stderr]) {
      let rest = '';
      stream?.setEncoding('utf8');
      stream?.on('data', (chunk: string) => {
        const parts = (rest + chunk).split('\n');
        rest = parts.pop() ?? '';
        for (const line of parts) if (line.trim()) lines.push(line);
        for (const listener of listeners) listener();
      });
      stream?.on('end', () => {
        if (rest.trim()) lines.push(rest);
        rest = '';
      });
    }
    const current = child;
    // 'close', not 'exit': by then every line the process wrote has been read.
    exited = once(current, 'close').then(() => {
      for (const listener of listeners) listener();
    });
  }

  const isRunning = () => child.exitCode === null && child.signalCode === null;
  const tail = () => lines.slice(-30).join('\n');

  function findLog(msg: string, since: number): Record<string, unknown> | undefined {
    for (const line of lines.slice(since)) {
      const parsed = parseLine(line);
      if (parsed?.msg === msg) return parsed;
    }
    return undefined;
  }

  const handle: AppProcess = {
    app,
    label,
    url,
    lines,
    get child() {
      return child;
    },
    get running() {
      return isRunning();
    },
    async ready(timeoutMs = 45_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        if (!isRunning())
          throw new Error(`${label} exited (${child.exitCode ?? child.signalCode}):\n${tail()}`);
        if (url) {
          const ok =
            listening &&
            (await request(`${url}/readyz`, { headersTimeout: 2000, bodyTimeout: 2000 }).then(
              async (res) => {
                await res.body.dump();
                return res.statusCode === 200;
              },
              () => false,
            ));
          if (ok) return;
        } else if (findLog('runtime-worker started', runStart)) {
          return;
        }
        if (Date.now() > deadline) throw new Error(`${label} not ready within ${timeoutMs} ms:\n${tail()}`);
        await sleep(100);
      }
    },
    waitForLog(msg, { since = 0, timeoutMs = 30_000 } = {}) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const hit = findLog(msg, since);
          if (hit) {
            cleanup();
            resolve(hit);
          } else if (!isRunning()) {
            cleanup();
            reject(new Error(`${label} exited before "${msg}":\n${tail()}`));
          }
        };
        const timer = setTimeout(() => {
          cleanup();
          reject(new Error(`${label}: no "${msg}" within ${timeoutMs} ms:\n${tail()}`));
        }, timeoutMs);
        function cleanup() {
          clearTimeout(timer);
          listeners.delete(check);
        }
        listeners.add(check);
        check();
      });
    },
    async stop() {
      if (isRunning()) child.kill('SIGTERM');
      await exited;
      return child.exitCode;
    },
    async kill() {
      if (isRunning()) child.kill('SIGKILL');
      await exited;
    },
    async restart() {
      if (isRunning()) throw new Error(`${label} is still running: stop or kill it first`);
      start();
      await handle.ready();
    },
  };
  start();
  try {
    await handle.ready();
  } catch (error) {
    await handle.kill();
    throw error;
  }
  return handle;
}

/** A log line as pino wrote it, or undefined when the line is not JSON. */
export function parseLine(line: string): Record<string, unknown> | undefined {
  if (!line.startsWith('{')) return undefined;
  try {
    return JSON.parse(line) as Record<string, unknown>;
  } catch {
    return undefined;
  }
}

/**
 * Fails when any line holds any of `secrets` (tokens, client secrets, memory contents): logs are shipped
 * and kept where those must never be. The message names the line and which secret, never the secret.
 */
export function assertLogsClean(lines: readonly string[], secrets: readonly string[]): void {
  const wanted = secrets.filter((s) => s.length >= 8);
  if (wanted.length !== secrets.length)
    throw new Error('secrets shorter than 8 characters cannot be checked');
  for (const line of lines) {
    for (const [i, secret] of wanted.entries()) {
      if (line.includes(secret)) {
        throw new Error(
          `a log line holds secret #${i}: ${line.replaceAll(secret, '<secret>').slice(0, 300)}`,
        );
      }
    }
  }
}

/** Lines at level error or fatal (pino 50+), for a test to show none appeared. */
export function errorLines(lines: readonly string[]): string[] {
  return lines.filter((line) => {
    const parsed = parseLine(line);
    return typeof parsed?.level === 'number' && parsed.level >= 50;
  });
}

function withDatabase(url: string, name: string): string {
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
}

export interface StackDatabase {
  url: string;
  drop(): Promise<void>;
}

/**
 * A new database on the cluster `adminUrl` points at, migrated with @pkgreg/db's migrator as a deploy
 * would; `drop()` removes it.
 */
export async function createStackDatabase(
  adminUrl: string = DEFAULT_ADMIN_DATABASE_URL,
): Promise<StackDatabase> {
  const name = `pkgreg_stack_${Math.floor(Date.now() / 1000).toString(36)}_${randomBytes(4).toString('hex')}`;
  const admin = async (sql: string) => {
    const client = new pg.Client({ connectionString: adminUrl });
    await client.connect();
    try {
      await client.query(sql);
    } finally {
      await client.end();
    }
  };
  await admin(`create database ${quoteIdent(name)}`);
  const url = withDatabase(adminUrl, name);
  const db = createDb(url, { max: 1 });
  try {
    await migrateToLatest(db);
  } finally {
    await db.destroy();
  }
  return { url, drop: () => admin(`drop database if exists ${quoteIdent(name)} with (force)`) };
}

export interface SeedPackage {
  scope: string;
  name: string;
  description?: string;
}

/** Registry rows as the indexer writes them (the fields these tests read), visible at once. */
export async function seedPackages(databaseUrl: string, packages: readonly SeedPackage[]): Promise<void> {
  const db = createDb(databaseUrl, { max: 1 });
  try {
    await db
      .insertInto('packages')
      .values(
        packages.map((p) => {
          const description = p.description ?? `Helps with ${p.name}.`;
          return {
            scope: p.scope,
            name: p.name,
            description,
            source_repo: `${p.scope}/skills`,
            repo_owner: p.scope,
            skill_md_raw: `---\nname: ${p.name}\ndescription: ${description}\n---\n\n# ${p.name}\n`,
            frontmatter: JSON.stringify({ name: p.name, description }),
          };
        }),
      )
      .execute();
  } finally {
    await db.destroy();
  }
}

/** A queue prefix of this run's own, so stacks never see each other's jobs. */
export function stackQueuePrefix(label = 'stack'): string {
  return `pkgreg-stack:${label}:${randomBytes(4).toString('hex')}`;
}

/** Deletes every Redis key under `prefix` (the stack's queues) once a file is done. */
export async function dropRedisPrefix(redisUrl: string, prefix: string): Promise<void> {
  const redis = new Redis(redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1 });
  try {
    await redis.connect();
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
      cursor = next;
      if (keys.length) await redis.unlink(...keys);
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
}

const run = promisify(execFile);

/** `registry <args>` (apps/registry-api/dist/cli.js) on the stack's database: the operator's path. */
export async function registryCli(services: Services, ...args: string[]): Promise<string> {
  const env = { PATH: process.env.PATH ?? '', NODE_ENV: 'test', LOG_LEVEL: 'warn' };
  const { stdout } = await run(process.execPath, [CLIS.registry, ...args], {
    env: { ...env, DATABASE_URL: services.databaseUrl, REDIS_URL: services.redisUrl },
  });
  return stdout;
}

/** `edge <args>` (apps/mcp-edge/dist/cli.js) on the stack's database. */
export async function edgeCli(services: Services, ...args: string[]): Promise<string> {
  const env = { PATH: process.env.PATH ?? '', NODE_ENV: 'test', LOG_LEVEL: 'warn' };
  const { stdout } = await run(process.execPath, [CLIS.edge, ...args], {
    env: { ...env, DATABASE_URL: services.databaseUrl, REDIS_URL: services.redisUrl },
  });
  return stdout;
}

export interface EdgeClient {
  clientId: string;
  clientSecret: string;
  accessToken: string;
}

/**
 * Registers an OAuth client with `scopes` through the operator command (`edge clients:create`) and gets
 * an access token for it from `edge`'s token endpoint (client_credentials), as an agent would.
 */
export async function edgeClient(
  services: Services,
  edge: Pick<AppProcess, 'url'>,
  scopes: readonly string[],
): Promise<EdgeClient> {
  const out = await edgeCli(
    services,
    'clients:create',
    '--name',
    `stack-${randomBytes(3).toString('hex')}`,
    '--scopes',
    scopes.join(','),
  );
  const { clientId, clientSecret } = JSON.parse(out) as { clientId: string; clientSecret: string };
  const accessToken = await edgeToken(edge, clientId, clientSecret);
  return { clientId, clientSecret, accessToken };
}

/** An access token for a registered client from `edge`'s token endpoint. */
export async function edgeToken(
  edge: Pick<AppProcess, 'url'>,
  clientId: string,
  clientSecret: string,
): Promise<string> {
  const res = await request(`${edge.url}/mcp/token`, {
    method: 'POST',
    headers: {
      authorization: `Basic ${Buffer.from(`${clientId}:${clientSecret}`).toString('base64')}`,
      'content-type': 'application/x-www-form-urlencoded',
    },
    body: new URLSearchParams({
      grant_type: 'client_credentials',
      resource: `${EDGE_PUBLIC_BASE}/mcp`,
    }).toString(),
  });
  const body = (await res.body.json()) as { access_token?: string };
  if (res.statusCode !== 200 || !body.access_token) {
    throw new Error(`token request failed: ${res.statusCode} ${JSON.stringify(body)}`);
  }
  return body.access_token;
}

export interface RpcAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: {
    jsonrpc?: string;
    id?: string | number | null;
    result?: Record<string, unknown>;
    error?: { code: number; message: string; data?: { reason?: string; requestId?: string } };
  };
}

/** One JSON-RPC request to `edge`'s /mcp, as a Streamable HTTP client sends it. */
export async function mcpRequest(
  edge: Pick<AppProcess, 'url'>,
  token: string,
  method: string,
  params: Record<string, unknown> = {},
  options: { id?: string | number; headers?: Record<string, string>; timeoutMs?: number } = {},
): Promise<RpcAnswer> {
  const res = await request(`${edge.url}/mcp`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2025-11-25',
      ...options.headers,
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: options.id ?? 1, method, params }),
    headersTimeout: options.timeoutMs ?? 30_000,
    bodyTimeout: options.timeoutMs ?? 30_000,
  });
  const text = await res.body.text();
  let body: RpcAnswer['body'] = {};
  try {
    body = JSON.parse(text) as RpcAnswer['body'];
  } catch {
    body = { error: { code: 0, message: `not JSON: ${text.slice(0, 200)}` } };
  }
  return { status: res.statusCode, headers: res.headers, body };
}

/** `tools/call` of `name` with `args`; the tool's structured result, or the JSON-RPC error. */
export function callTool(
  edge: Pick<AppProcess, 'url'>,
  token: string,
  name: string,
  args: Record<string, unknown> = {},
  options: { id?: string | number; headers?: Record<string, string>; timeoutMs?: number } = {},
): Promise<RpcAnswer> {
  return mcpRequest(edge, token, 'tools/call', { name, arguments: args }, options);
}

export interface HttpAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: unknown;
}

/** One HTTP request; the body parsed as JSON when it is JSON. Never throws on a status. */
export async function http(
  url: string,
  options: { method?: 'GET' | 'POST' | 'DELETE'; body?: unknown; headers?: Record<string, string> } = {},
): Promise<HttpAnswer> {
  const res = await request(url, {
    method: options.method ?? 'GET',
    headers: {
      ...(options.body === undefined ? {} : { 'content-type': 'application/json' }),
      ...options.headers,
    },
    ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
    headersTimeout: 30_000,
    bodyTimeout: 30_000,
  });
  const text = await res.body.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {}
  return { status: res.statusCode, headers: res.headers, body };
}
