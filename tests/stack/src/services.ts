import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { chmod, chown, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { freePort } from '@pkgreg/testing';
import { Redis } from 'ioredis';
import pg from 'pg';

// PostgreSQL and Redis of a test file's own, on ephemeral ports, that the file can stop and start again:
// the faults an operator meets (a restart, a failover, a crash of the server) without touching the
// machine's shared servers. Both keep their data across a stop, as a production server does.

const run = promisify(execFile);

const PG_BIN = process.env.PKGREG_PG_BIN ?? '/usr/lib/postgresql/15/bin';
const REDIS_SERVER = process.env.PKGREG_REDIS_SERVER ?? 'redis-server';

/** One of the services a fault test stops and starts again. */
export interface FaultService {
  /** Stops it (a clean, fast shutdown: connections are cut, nothing is lost). */
  stop(): Promise<void>;
  /** Starts it again on the same port and data, and resolves once it answers. */
  start(): Promise<void>;
  /** Removes it and its data (end of the file). */
  teardown(): Promise<void>;
}

export interface PostgresService extends FaultService {
  /** `postgres://postgres@127.0.0.1:<port>/postgres`: the cluster's admin database. */
  readonly adminUrl: string;
  readonly port: number;
}

export interface RedisService extends FaultService {
  readonly url: string;
  readonly port: number;
}

// PostgreSQL refuses to run as root: as root, its commands run as the `postgres` account.
const asRoot = process.getuid?.() === 0;

async function postgresUser(): Promise<{ uid: number; gid: number } | undefined> {
  if (!asRoot) return undefined;
  const { stdout } = await run('id', ['-u', 'postgres']);
  const { stdout: gid } = await run('id', ['-g', 'postgres']);
  return { uid: Number(stdout.trim()), gid: Number(gid.trim()) };
}

function pgCommand(
  binary: string,
  args: string[],
  options: { timeout?: number } = {},
): Promise<{ stdout: string }> {
  const path = join(PG_BIN, binary);
  return asRoot
    ? run('runuser', ['-u', 'postgres', '--', path, ...args], { timeout: options.timeout ?? 60_000 })
    : run(path, args, { timeout: options.timeout ?? 60_000 });
}

async function answers(check: () => Promise<unknown>, what: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      await check();
      return;
    } catch (error) {
      if (Date.now() > deadline) throw new Error(`${what} did not answer within ${timeoutMs} ms: ${error}`);
      await sleep(50);
    }
  }
}

/**
 * A PostgreSQL cluster of its own: initdb into a temporary directory (trust auth, user postgres), then
 * pg_ctl on an ephemeral port, its socket in the data directory.
 */
export async function startPostgres(): Promise<PostgresService> {
  const dir = await mkdtemp(join(tmpdir(), 'pkgreg-fault-pg-'));
  const owner = await postgresUser();
  if (owner) await chown(dir, owner.uid, owner.gid);
  await chmod(dir, 0o700);
  const data = join(dir, 'data');
  await pgCommand('initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync', '-E', 'UTF8']);
  const port = await freePort();
  const adminUrl = `postgres://postgres@127.0.0.1:${port}/postgres`;
  const settings = [
    `-p ${port}`,
    `-k ${dir}`,
    '-c listen_addresses=127.0.0.1',
    // The suite's own throwaway cluster: durability across a machine crash is not what is tested.
    '-c fsync=off',
    '-c synchronous_commit=off',
    '-c max_connections=200',
  ].join(' ');
  const ping = async () => {
    const client = new pg.Client({ connectionString: adminUrl, connectionTimeoutMillis: 2000 });
    await client.connect();
    await client.end();
  };
  const start = async () => {
    await pgCommand('pg_ctl', ['-D', data, '-o', settings, '-l', join(dir, 'server.log'), '-w', 'start']);
    await answers(ping, 'PostgreSQL');
  };
  const stop = async () => {
    // Fast: every session is cut at once and the server shuts down cleanly, as in a restart or failover.
    await pgCommand('pg_ctl', ['-D', data, '-m', 'fast', '-w', 'stop']);
  };
  await start();
  let running = true;
  return {
    adminUrl,
    port,
    async stop() {
      await stop();
      running = false;
    },
    async start() {
      await start();
      running = true;
    },
    async teardown() {
      if (running) await pgCommand('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']).catch(() => {});
      running = false;
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/**
 * A redis-server of its own on an ephemeral port, with an append-only file in a temporary directory
 * (BullMQ's jobs survive its restart, as on a production Redis) and `noeviction`.
 */
export async function startRedis(): Promise<RedisService> {
  const dir = await mkdtemp(join(tmpdir(), 'pkgreg-fault-redis-'));
  const port = await freePort();
  const url = `redis://127.0.0.1:${port}`;
  let child: ChildProcess | undefined;
  const args = [
    '--port',
    String(port),
    '--bind',
    '127.0.0.1',
    '--dir',
    dir,
    '--appendonly',
    'yes',
    '--appendfsync',
    'everysec',
    '--save',
    '',
    '--maxmemory-policy',
    'noeviction',
    '--daemonize',
    'no',
  ];
  const ping = async () => {
    const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    redis.on('error', () => {}); // a refused connect also rejects connect(), which is what counts
    try {
      await redis.connect();
      await redis.ping();
    } finally {
      redis.disconnect();
    }
  };
  const start = async () => {
    child = spawn(REDIS_SERVER, args, { stdio: 'ignore' });
    await answers(ping, 'Redis');
  };
  const stop = async () => {
    const current = child;
    if (!current || current.exitCode !== null || current.signalCode !== null) return;
    const exited = once(current, 'exit');
    // SIGTERM: Redis writes its append-only file and exits, as on a restart.
    current.kill('SIGTERM');
    await exited;
  };
  await start();
  return {
    url,
    port,
    stop,
    start,
    async teardown() {
      await stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** Stops `service` for `ms`, then starts it again; resolves with when it answered again (Date.now()). */
export async function outage(
  service: FaultService,
  ms: number,
): Promise<{ stoppedAt: number; backAt: number }> {
  await service.stop();
  const stoppedAt = Date.now();
  await sleep(ms);
  await service.start();
  return { stoppedAt, backAt: Date.now() };
}
