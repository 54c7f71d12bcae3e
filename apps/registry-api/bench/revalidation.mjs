// `pnpm --filter @pkgreg/registry-api bench:revalidation` (docs/benchmarks.md, "HTTP caching"): what a
// cache's revalidation of a list, search or feed answer costs the registry, against the full answer.
// Starts the BUILT server (dist) on pkgreg_bench (100k packages by default, generated when missing)
// pinned to core 0, drives it with autocannon pinned to core 1, and alternates the 200 (no validator)
// and the 304 (If-None-Match: the ETag just served) of each route in short rounds (median of each).
// It also times the catalog mark query alone and a SHA-1 of the 200 body (what hashing the body would
// add to the full answer). Options: --size, --duration <seconds per round>, --rounds.
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { prepareBenchDatabase } from './bench-db.mjs';
import { benchServerEnv } from './server-env.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const appDir = path.resolve(here, '..');

if (!process.env.PKGREG_BENCH_LOCKED) {
  const r = spawnSync('flock', ['/tmp/pkgreg-bench.lock', process.execPath, ...process.argv.slice(1)], {
    stdio: 'inherit',
    env: { ...process.env, PKGREG_BENCH_LOCKED: '1' },
  });
  process.exit(r.status ?? 1);
}

const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : fallback;
};
const size = Number(arg('size', '100000'));
const seconds = Number(arg('duration', '2'));
const rounds = Number(arg('rounds', '3'));
const adminUrl = arg('database-url', 'postgres://postgres@127.0.0.1:5432/postgres');
const serverEntry = path.join(appDir, 'dist/index.js');
if (!existsSync(serverEntry)) {
  console.error('dist/index.js missing: run `pnpm turbo run build --filter=@pkgreg/registry-api...` first');
  process.exit(1);
}
const PORT = 4792;
const CONNECTIONS = 10;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function load(base, paths, headers) {
  const spec = JSON.stringify({ url: base, connections: CONNECTIONS, duration: seconds, paths, headers });
  const r = spawnSync('taskset', ['-c', '1', process.execPath, path.join(here, 'load.mjs'), spec], {
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  if (r.status !== 0) throw new Error(`load failed: ${r.stderr}`);
  return JSON.parse(r.stdout.trim().split('\n').pop());
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const fmt = (n, d = 1) => n.toFixed(d);

const url = await prepareBenchDatabase(adminUrl, size);
const loadAtStart = os.loadavg()[0];
const client = new pg.Client({ connectionString: url });
await client.connect();
const { readCatalogMark } = await import('../dist/packages/packages.repository.js');
const { createDb } = await import('@pkgreg/db');

// The mark query alone, on one connection, after a warm-up.
const markDb = createDb(url, { max: 1, applicationName: 'pkgreg-bench-mark' });
for (let i = 0; i < 200; i += 1) await readCatalogMark(markDb, { privateToo: false });
const MARKS = 2000;
let started = process.hrtime.bigint();
for (let i = 0; i < MARKS; i += 1) await readCatalogMark(markDb, { privateToo: false });
const markMs = Number(process.hrtime.bigint() - started) / 1e6 / MARKS;
await markDb.destroy();

const server = spawn('taskset', ['-c', '0', process.execPath, serverEntry], {
  env: { ...process.env, ...benchServerEnv(url, PORT) },
  stdio: ['ignore', 'ignore', 'inherit'],
});
const base = `http://127.0.0.1:${PORT}`;
const rows = [];
try {
  for (let deadline = Date.now() + 20_000; ; ) {
    try {
      if ((await fetch(`${base}/healthz`)).ok) break;
    } catch {}
    if (Date.now() > deadline) throw new Error('server did not come up');
    await sleep(100);
  }
  const routes = {
    'list page 1': '/api/packages',
    'list kind=app by downloads': '/api/packages?kind=app&sort=downloads&order=desc',
    'search common "data"': '/api/search?q=data',
    'search two terms "code review"': '/api/search?q=code%20review',
    'feed, first 100': '/api/packages?limit=100',
  };
  for (const [label, p] of Object.entries(routes)) {
    const res = await fetch(`${base}${p}`);
    const body = Buffer.from(await res.arrayBuffer());
    const etag = res.headers.get('etag');
    const check = await fetch(`${base}${p}`, { headers: { 'if-none-match': etag } });
    if (check.status !== 304) throw new Error(`${label}: revalidation answered ${check.status}`);
    started = process.hrtime.bigint();
    for (let i = 0; i < 1000; i += 1) createHash('sha1').update(body).digest('base64url');
    const hashUs = Number(process.hrtime.bigint() - started) / 1e3 / 1000;
    load(base, [p], {}); // warm-up
    const full = [];
    const revalidated = [];
    for (let round = 0; round < rounds; round += 1) {
      full.push(load(base, [p], {}));
      revalidated.push(load(base, [p], { 'if-none-match': etag }));
    }
    const row = {
      label,
      bytes: body.length,
      fullRps: median(full.map((r) => r.rps)),
      fullP50: median(full.map((r) => r.p50)),
      fullP99: median(full.map((r) => r.p99)),
      revRps: median(revalidated.map((r) => r.rps)),
      revP50: median(revalidated.map((r) => r.p50)),
      revP99: median(revalidated.map((r) => r.p99)),
      non2xx: full.reduce((n, r) => n + r.non2xx, 0),
      not304: revalidated.reduce((n, r) => n + r.ok, 0),
      errors: [...full, ...revalidated].reduce((n, r) => n + r.errors, 0),
      hashUs,
    };
    rows.push(row);
    console.log(JSON.stringify(row));
  }
} finally {
  server.kill('SIGTERM');
  await client.end();
}

console.log(
  `\n${size.toLocaleString('en')} packages, c=${CONNECTIONS}, ${rounds} alternating rounds of ${seconds} s, median of each` +
    ` (1-min load average ${fmt(loadAtStart, 2)} at start, ${fmt(os.loadavg()[0], 2)} at end);` +
    ` catalog mark query alone: ${fmt(markMs, 3)} ms\n`,
);
console.log(
  '| route | body | 200 req/s | 200 p50 / p99 ms | 304 req/s | 304 p50 / p99 ms | 304 / 200 | SHA-1 of the body |',
);
console.log('|---|---:|---:|---:|---:|---:|---:|---:|');
for (const r of rows) {
  console.log(
    `| ${r.label} | ${(r.bytes / 1024).toFixed(1)} KB | ${fmt(r.fullRps, 0)} | ${fmt(r.fullP50)} / ${fmt(r.fullP99)} | ${fmt(r.revRps, 0)} | ${fmt(r.revP50)} / ${fmt(r.revP99)} | ${fmt(r.revRps / r.fullRps, 2)}x | ${fmt(r.hashUs, 1)} µs |`,
  );
}
const bad = rows.filter((r) => r.non2xx > 0 || r.not304 > 0 || r.errors > 0);
if (bad.length) console.log(`\nunexpected statuses or errors: ${bad.map((r) => r.label).join(', ')}`);
