#!/usr/bin/env node
// `pnpm dev` (or `npm run dev` on a machine without pnpm): the whole stack with demo data.
// Brings Node 24 and pnpm into .toolchain/ when the machine's are other versions (never replacing them),
// installs dependencies, finds or starts PostgreSQL and Redis, builds, migrates, seeds, starts every app
// with turbo, prints the URLs, and stops it all on Ctrl-C.
// Uses Node built-ins only: it runs before anything is installed.
import { spawn, spawnSync } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureDependencies, ensureToolchain, toolchainBin } from './toolchain.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const dataDir = path.join(root, '.data');
const log = (message) => console.log(`\x1b[36m[pkgreg dev]\x1b[0m ${message}`);
const fail = (message) => {
  console.error(`\x1b[31m[pkgreg dev]\x1b[0m ${message}`);
  process.exit(1);
};

function run(command, args, options = {}) {
  const result = spawnSync(command, args, { cwd: root, stdio: 'inherit', ...options });
  if (result.status !== 0)
    fail(`${command} ${args.join(' ')} failed (exit ${result.status ?? result.signal})`);
}

function has(command) {
  return spawnSync('sh', ['-c', `command -v ${command}`], { stdio: 'ignore' }).status === 0;
}

// 1. Node 24 and pnpm: the machine's when they are those versions, else the project's .toolchain/ (never
// a global install). Re-run this script under Node 24 when started by an older one.
if (!ensureToolchain(log)) {
  if (process.env.PKGREG_DEV_REEXEC) fail(`still on node ${process.version} after bootstrapping`);
  process.on('SIGINT', () => {}); // the child gets the terminal's Ctrl-C and shuts down itself
  const child = spawnSync('node', [fileURLToPath(import.meta.url), ...process.argv.slice(2)], {
    stdio: 'inherit',
    env: { ...process.env, PKGREG_DEV_REEXEC: '1' },
  });
  process.exit(child.status ?? 1);
}

// 2. Dependencies, when missing or older than the lockfile.
ensureDependencies(log);

// 3. PostgreSQL and Redis: DATABASE_URL/REDIS_URL, else the local services, else our own under .data/.
function portOpen(port, host = '127.0.0.1') {
  return new Promise((resolve) => {
    const socket = net.connect({ port, host });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
    socket.setTimeout(1000, () => {
      socket.destroy();
      resolve(false);
    });
  });
}

async function waitForPort(port, what) {
  for (let i = 0; i < 100; i++) {
    if (await portOpen(port)) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  fail(`${what} did not start on port ${port}`);
}

function findPostgresBin(name) {
  if (has(name)) return name;
  const base = '/usr/lib/postgresql';
  if (!existsSync(base)) return null;
  const versions = readdirSync(base).sort((a, b) => Number(b) - Number(a));
  for (const v of versions) {
    const candidate = path.join(base, v, 'bin', name);
    if (existsSync(candidate)) return candidate;
  }
  return null;
}

const cleanups = [];
const INSTALL_HINT =
  'pkgreg dev needs PostgreSQL (15 or newer) and Redis (7 or newer). Install them, e.g. on Debian/Ubuntu:\n' +
  '  sudo apt-get install -y postgresql redis-server\n' +
  'or point DATABASE_URL and REDIS_URL at running servers.';

async function resolveDatabaseUrl() {
  if (process.env.DATABASE_URL) return process.env.DATABASE_URL;
  if (await portOpen(5432)) return 'postgres://postgres@127.0.0.1:5432/pkgreg';
  const initdb = findPostgresBin('initdb');
  const pgCtl = findPostgresBin('pg_ctl');
  if (!initdb || !pgCtl) fail(INSTALL_HINT);
  const pgData = path.join(dataDir, 'postgres');
  const port = 54329;
  // PostgreSQL refuses to run as root: run it as the postgres user when we are root.
  const asUser = process.getuid?.() === 0 ? ['runuser', '-u', 'postgres', '--'] : [];
  const exec = (cmd, args) =>
    run(asUser[0] ?? cmd, [...asUser.slice(1), ...(asUser.length ? [cmd] : []), ...args]);
  if (!existsSync(path.join(pgData, 'PG_VERSION'))) {
    log(`initialising PostgreSQL in ${pgData}`);
    mkdirSync(pgData, { recursive: true });
    if (asUser.length) run('chown', ['-R', 'postgres', dataDir]);
    exec(initdb, ['-D', pgData, '-U', 'postgres', '--auth=trust', '--encoding=UTF8']);
  }
  log(`starting PostgreSQL on 127.0.0.1:${port}`);
  exec(pgCtl, [
    '-D',
    pgData,
    '-o',
    `-p ${port} -k /tmp -c listen_addresses=127.0.0.1`,
    '-l',
    path.join(dataDir, 'postgres.log'),
    '-w',
    'start',
  ]);
  cleanups.push(() =>
    spawnSync(
      asUser[0] ?? pgCtl,
      [...asUser.slice(1), ...(asUser.length ? [pgCtl] : []), '-D', pgData, '-m', 'fast', 'stop'],
      { stdio: 'ignore' },
    ),
  );
  return `postgres://postgres@127.0.0.1:${port}/pkgreg`;
}

async function resolveRedisUrl() {
  if (process.env.REDIS_URL) return process.env.REDIS_URL;
  if (await portOpen(6379)) return 'redis://127.0.0.1:6379';
  if (!has('redis-server')) fail(INSTALL_HINT);
  const port = 63799;
  const dir = path.join(dataDir, 'redis');
  mkdirSync(dir, { recursive: true });
  log(`starting Redis on 127.0.0.1:${port}`);
  const redis = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--appendonly', 'no'],
    {
      stdio: 'ignore',
    },
  );
  cleanups.push(() => redis.kill('SIGTERM'));
  await waitForPort(port, 'Redis');
  return `redis://127.0.0.1:${port}`;
}

const DATABASE_URL = await resolveDatabaseUrl();
const REDIS_URL = await resolveRedisUrl();
const env = {
  ...process.env,
  DATABASE_URL,
  REDIS_URL,
  NODE_ENV: process.env.NODE_ENV ?? 'development',
  PKGREG_PUBLIC_BASE_URL: process.env.PKGREG_PUBLIC_BASE_URL ?? 'http://localhost:4100',
  REGISTRY_URL: process.env.REGISTRY_URL ?? 'http://127.0.0.1:4000',
};
// Accounts in development (docs/accounts.md): the web UI's dev server (Vite, :5173) proxies /api, so the
// registry must trust its origin for signed-in writes; the development sign-in needs no identity provider.
env.WEB_ORIGINS ??= 'http://localhost:5173,http://127.0.0.1:5173';
if (env.NODE_ENV !== 'production') env.DEV_SIGN_IN ??= 'true';
// An agent app's sign-in to the edge (docs/accounts.md, "Consent for MCP clients"): the registry's consent
// page sends the browser back to the edge's public URL.
env.EDGE_PUBLIC_BASE_URL ??= env.PKGREG_PUBLIC_BASE_URL;
// The registry signs versions and logs them (docs/provenance.md): a development key made once, kept in
// .data/ (git-ignored) so signatures stay verifiable across restarts.
if (!env.REGISTRY_SIGNING_KEY && !env.REGISTRY_SIGNING_KEY_FILE) {
  const keyFile = path.join(dataDir, 'registry-signing-key.pem');
  if (!existsSync(keyFile)) {
    mkdirSync(dataDir, { recursive: true });
    const { privateKey } = generateKeyPairSync('ed25519');
    writeFileSync(keyFile, privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
  }
  env.REGISTRY_SIGNING_KEY_FILE = keyFile;
}

// 4-6. Build, migrate, seed.
log('building');
run('pnpm', ['turbo', 'run', 'build', '--output-logs=errors-only'], { env });
log('migrating');
run('node', ['packages/db/dist/migrate-cli.js'], { env });
if (existsSync(path.join(root, 'apps/registry-api/dist/cli.js'))) {
  log('seeding demo packages (indexed from local git repositories by the real indexer)');
  run('node', ['apps/registry-api/dist/cli.js', 'seed-demo'], { env });
}
if (existsSync(path.join(root, 'apps/mcp-edge/dist/cli.js'))) {
  const demo = spawnSync('node', ['apps/mcp-edge/dist/cli.js', 'clients:demo'], {
    cwd: root,
    env,
    encoding: 'utf8',
  });
  if (demo.status === 0 && demo.stdout.trim()) log(`MCP demo client:\n${demo.stdout.trim()}`);
}

// 7. Every app's `dev` task under turbo, in a process group of its own so Ctrl-C stops all of it.
const stack = spawn(
  'pnpm',
  // Loose env mode: turbo 2 otherwise hands the tasks only the variables turbo.json declares, and the
  // apps would miss the DATABASE_URL/REDIS_URL resolved above (e.g. our own servers under .data/).
  ['turbo', 'run', 'dev', '--filter=./apps/*', '--filter=./packages/*', '--ui=stream', '--env-mode=loose'],
  {
    cwd: root,
    env,
    stdio: 'inherit',
    detached: true,
  },
);

let stopping = false;
async function stop(code = 0) {
  if (stopping) return;
  stopping = true;
  log('stopping');
  try {
    process.kill(-stack.pid, 'SIGTERM');
  } catch {}
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    try {
      process.kill(-stack.pid, 0);
    } catch {
      break; // the group is gone
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  try {
    process.kill(-stack.pid, 'SIGKILL');
  } catch {}
  for (const cleanup of cleanups.reverse()) cleanup();
  process.exit(code);
}
process.on('SIGINT', () => stop(0));
process.on('SIGTERM', () => stop(0));
process.on('SIGHUP', () => stop(0));
// `pnpm dev` sent SIGTERM (by a process manager, `kill <pid>`) exits without passing it on, and the
// shell between it and this script keeps running: when the package manager that ran this script is
// gone, stop as if signalled instead of keeping the stack up. Linux (/proc) only; elsewhere, and when
// started as `node scripts/dev.mjs`, only signals stop it.
function launcherPid() {
  if (!process.env.npm_execpath) return undefined;
  let pid = process.ppid;
  for (let depth = 0; depth < 8 && pid > 1; depth++) {
    try {
      // `node …/pnpm dev`, or npm's own title (`npm run dev`: one argument with spaces).
      const args = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').slice(0, 2);
      const launcher = (arg) => /^(pnpm|npm)(\.c?js|-cli\.js)?$/.test(path.basename(arg.split(' ')[0] ?? ''));
      if (args.some(launcher)) return pid;
      pid = Number(readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ')[1]);
    } catch {
      return undefined;
    }
  }
  return undefined;
}
const launcher = launcherPid();
if (launcher) {
  setInterval(() => {
    try {
      process.kill(launcher, 0);
    } catch {
      stop(0);
    }
  }, 1000).unref();
}
stack.on('exit', (code) => {
  if (!stopping) {
    console.error(`turbo exited (${code}); stopping`);
    stop(code ?? 1);
  }
});

// 8. Wait for readiness, then say where everything is.
async function ready(url) {
  for (let i = 0; i < 900 && !stopping; i++) {
    try {
      const res = await fetch(url);
      if (res.ok) return true;
    } catch {}
    await new Promise((r) => setTimeout(r, 200));
  }
  return false;
}
const [registryUp, edgeUp] = await Promise.all([
  ready('http://127.0.0.1:4000/readyz'),
  ready('http://127.0.0.1:4100/readyz'),
]);
if (!stopping) {
  log(
    [
      'the stack is up:',
      `  web UI        http://localhost:5173 (sign in as "developer" to see the private demo skill)`,
      `  registry API  http://127.0.0.1:4000/api/packages ${registryUp ? '(ready)' : '(NOT ready)'}`,
      `  MCP edge      ${env.PKGREG_PUBLIC_BASE_URL}/mcp ${edgeUp ? '(ready)' : '(NOT ready)'}`,
      `  PostgreSQL    ${DATABASE_URL}`,
      `  Redis         ${REDIS_URL}`,
      ...(existsSync(path.join(toolchainBin, 'pnpm'))
        ? [
            "This project's Node 24 and pnpm are in .toolchain/bin (your own are untouched): `npm test` runs",
            'the tests; to type `pnpm …`, first: export PATH="$PWD/.toolchain/bin:$PATH"',
          ]
        : []),
      'Ctrl-C stops everything.',
    ].join('\n'),
  );
}
