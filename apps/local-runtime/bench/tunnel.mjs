// The local tunnel's cost: the same MCP calls through the edge to its development backend (the edge's own
// PostgreSQL) and through a tunnel session to `pkgreg-runtime local` (its WebSocket, then the runtime on its
// embedded PGlite store, or on a PostgreSQL). Spawns the built edge and runtimes, like the e2e tests.
// Run: pnpm turbo run build --filter=pkgreg-runtime... && flock /tmp/pkgreg-bench.lock pnpm --filter pkgreg-runtime bench
// Env: BENCH_CALLS (sequential calls per operation, default 2000), BENCH_SECONDS (throughput run, 5),
//      BENCH_CONCURRENCY (in flight during it, 16).
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createTestDatabase, TEST_REDIS_URL } from '@pkgreg/db/testing';
import { Pool } from 'undici';

const CALLS = Number(process.env.BENCH_CALLS ?? 2000);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16);
const PORT = 4187;
const require = createRequire(import.meta.url);
const EDGE = dirname(require.resolve('@pkgreg/mcp-edge/package.json'));
const RUNTIME = new URL('../dist/index.js', import.meta.url).pathname;

function start(script, args, env, readyMsg) {
  const child = spawn(process.execPath, [script, ...args], {
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    let buffered = '';
    child.stdout.on('data', (chunk) => {
      buffered += chunk;
      if (buffered.includes(`"msg":"${readyMsg}"`)) resolve(child);
    });
    child.once('exit', (code) => reject(new Error(`${script} exited ${code} before "${readyMsg}"`)));
  });
}

function cli(args, env) {
  const r = spawnSync(process.execPath, [join(EDGE, 'dist/cli.js'), ...args], {
    env: { ...process.env, ...env },
    encoding: 'utf8',
  });
  if (r.status !== 0) throw new Error(r.stderr);
  return r.stdout;
}

const percentile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
const ms = (v) => `${v.toFixed(2)} ms`;

const edgeDb = await createTestDatabase();
const runtimeDb = await createTestDatabase();
const children = [];
const dataDir = mkdtempSync(join(tmpdir(), 'pkgreg-bench-rt-'));
try {
  const base = {
    DATABASE_URL: edgeDb.url,
    REDIS_URL: TEST_REDIS_URL,
    PKGREG_PUBLIC_BASE_URL: `http://127.0.0.1:${PORT}`,
  };
  const client = JSON.parse(
    cli(
      ['clients:create', '--name', 'bench', '--scopes', 'pkgreg.memory.stm.read pkgreg.memory.stm.write'],
      base,
    ),
  );
  const sessions = [];
  for (const handle of ['lite', 'pg']) {
    const out = cli(['tunnels:create', '--handle', handle, '--client', client.clientId], {
      ...base,
      PKGREG_PUBLIC_MCP_TUNNEL_SESSIONS_JSON: JSON.stringify(sessions),
    });
    sessions.length = 0;
    sessions.push(...JSON.parse(/PKGREG_PUBLIC_MCP_TUNNEL_SESSIONS_JSON='(.+)'/.exec(out)[1]));
  }
  children.push(
    await start(
      join(EDGE, 'dist/index.js'),
      [],
      {
        ...base,
        EDGE_PORT: String(PORT),
        PKGREG_PUBLIC_MCP_TUNNEL_SESSIONS_JSON: JSON.stringify(sessions),
        EDGE_RATE_LIMIT_PER_MINUTE: '1000000000',
        LOG_LEVEL: 'info',
      },
      'mcp-edge listening',
    ),
  );
  for (const [session, store] of [
    [sessions[0], ['--data-dir', dataDir]],
    [sessions[1], ['--database-url', runtimeDb.url]],
  ]) {
    children.push(
      await start(
        RUNTIME,
        ['local', '--edge', `http://127.0.0.1:${PORT}`, '--session-id', session.sessionId, ...store],
        { PKGREG_TUNNEL_SECRET: session.secret, PKGREG_TUNNEL_CLIENTS: client.clientId, LOG_LEVEL: 'info' },
        'tunnel connected',
      ),
    );
  }
  // A token per host: each tenant or tunnel host is an OAuth resource of its own (its MCP URL).
  const tokens = new Map();
  async function tokenFor(host) {
    if (!tokens.has(host)) {
      const tokenRes = await fetch(`http://127.0.0.1:${PORT}/mcp/token`, {
        method: 'POST',
        headers: {
          authorization: `Basic ${Buffer.from(`${client.clientId}:${client.clientSecret}`).toString('base64')}`,
          'content-type': 'application/x-www-form-urlencoded',
        },
        body: new URLSearchParams({ grant_type: 'client_credentials', resource: `http://${host}/mcp` }),
      });
      tokens.set(host, (await tokenRes.json()).access_token);
    }
    return tokens.get(host);
  }
  const namespace = `app:${createHash('sha256').update(`http://127.0.0.1:${PORT}/mcp|${client.clientId}`).digest('hex')}`;
  const pool = new Pool(`http://127.0.0.1:${PORT}`, { connections: CONCURRENCY * 2 });

  async function call(host, name, args) {
    const token = await tokenFor(host);
    const res = await pool.request({
      path: '/mcp',
      method: 'POST',
      headers: {
        host,
        authorization: `Bearer ${token}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2025-11-25',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name, arguments: args },
      }),
    });
    const body = await res.body.json();
    if (res.statusCode !== 200 || body.error)
      throw new Error(`${name}: ${res.statusCode} ${JSON.stringify(body)}`);
    return body.result;
  }

  async function sequential(n, fn) {
    const times = [];
    for (let i = 0; i < n; i += 1) {
      const t0 = performance.now();
      await fn(i);
      times.push(performance.now() - t0);
    }
    times.sort((a, b) => a - b);
    return { p50: percentile(times, 50), p95: percentile(times, 95) };
  }

  async function throughput(fn) {
    const end = performance.now() + SECONDS * 1000;
    let done = 0;
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (performance.now() < end) {
          await fn();
          done += 1;
        }
      }),
    );
    return done / SECONDS;
  }

  const backends = [
    ['development (edge → its PostgreSQL)', `127.0.0.1:${PORT}`],
    ['tunnel → runtime on PGlite', `lite.tunnel.test:${PORT}`],
    ['tunnel → runtime on PostgreSQL', `pg.tunnel.test:${PORT}`],
  ];
  const rows = [];
  for (const [label, host] of backends) {
    const ids = [];
    const put = await sequential(CALLS / 4, async (i) => {
      const r = await call(host, 'pkgreg.memory.v1.put', {
        namespace,
        tier: 'stm',
        content: `bench note ${i} about deploys`,
      });
      ids.push(r.entry.entryId);
    });
    const get = await sequential(CALLS, (i) =>
      call(host, 'pkgreg.memory.v1.get', { namespace, entryId: ids[i % ids.length] }),
    );
    const search = await sequential(CALLS / 4, () =>
      call(host, 'pkgreg.memory.v1.search', { namespace, query: 'deploys', topK: 10 }),
    );
    let i = 0;
    const rps = await throughput(() =>
      call(host, 'pkgreg.memory.v1.get', { namespace, entryId: ids[i++ % ids.length] }),
    );
    rows.push({ label, put, get, search, rps });
    console.error(`${label}: get p50 ${ms(get.p50)}, ${Math.round(rps)} get/s`);
  }
  await pool.close();
  console.log(
    `Run of ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC, load ${loadavg()
      .map((x) => x.toFixed(2))
      .join(' ')}:`,
  );
  console.log('');
  console.log(
    `| backend | put p50 / p95 | get p50 / p95 | search p50 / p95 | get/s at ${CONCURRENCY} in flight |`,
  );
  console.log('|---|---:|---:|---:|---:|');
  for (const r of rows) {
    console.log(
      `| ${r.label} | ${ms(r.put.p50)} / ${ms(r.put.p95)} | ${ms(r.get.p50)} / ${ms(r.get.p95)} | ${ms(r.search.p50)} / ${ms(r.search.p95)} | ${Math.round(r.rps)} |`,
    );
  }
} finally {
  for (const child of children.reverse()) {
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
  }
  rmSync(dataDir, { recursive: true, force: true });
  await runtimeDb.destroy();
  await edgeDb.destroy();
}
