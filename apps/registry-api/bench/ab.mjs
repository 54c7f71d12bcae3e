// A/B of two registry-api builds under the same load, interleaved so both see the same machine:
//   node bench/ab.mjs <other-dist-dir> [--rounds 4] [--seconds 4] [--other-env NAME=VALUE]... [--only TEXT]
// Both builds serve the 1M database pkgreg_bench (made by `pnpm bench:registry`; migrated by this
// build), pinned to core 0, with autocannon on core 1 (bench/load.mjs). Each round runs every scenario
// on both builds, taking turns going first, so a burst of other work weighs on both alike. Prints the
// median of each scenario per build and the ratio this build / other. Holds the bench lock.
import { spawn, spawnSync } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { benchDatabaseUrl } from './bench-db.mjs';
import { benchServerEnv } from './server-env.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));

if (!process.env.PKGREG_BENCH_LOCKED) {
  const r = spawnSync('flock', ['/tmp/pkgreg-bench.lock', process.execPath, ...process.argv.slice(1)], {
    stdio: 'inherit',
    env: { ...process.env, PKGREG_BENCH_LOCKED: '1' },
  });
  process.exit(r.status ?? 1);
}

const args = process.argv.slice(2);
const arg = (name, fallback) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : fallback;
};
const otherDist = args[0] && !args[0].startsWith('--') ? path.resolve(args[0]) : undefined;
if (!otherDist) throw new Error('usage: node bench/ab.mjs <other-dist-dir> [--rounds 4] [--seconds 4]');
const rounds = Number(arg('rounds', '4'));
const seconds = Number(arg('seconds', '4'));
const url = benchDatabaseUrl(arg('database-url', 'postgres://postgres@127.0.0.1:5432/postgres'));
// Settings for the other build only (say, an older build's flusher kept from folding this one's batches).
const otherEnv = Object.fromEntries(
  args.flatMap((a, i) => (a === '--other-env' ? [args[i + 1]?.split(/=(.*)/s).slice(0, 2) ?? []] : [])),
);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function load(base, paths, { connections, method = 'GET', forwardedFor }) {
  const spec = JSON.stringify({ url: base, connections, duration: seconds, method, paths, forwardedFor });
  const r = spawnSync('taskset', ['-c', '1', process.execPath, path.join(here, 'load.mjs'), spec], {
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  if (r.status !== 0) throw new Error(`load failed: ${r.stderr}`);
  return JSON.parse(r.stdout.trim().split('\n').pop());
}

async function startServer(dist, port, env = {}) {
  const child = spawn('taskset', ['-c', '0', process.execPath, path.join(dist, 'index.js')], {
    env: { ...process.env, ...benchServerEnv(url, port), ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const base = `http://127.0.0.1:${port}`;
  for (let i = 0; ; i += 1) {
    try {
      if ((await fetch(`${base}/healthz`)).ok) return { child, base };
    } catch {}
    if (i > 300) throw new Error(`${dist} did not come up`);
    await sleep(100);
  }
}

const client = new pg.Client({ connectionString: url });
await client.connect();
const sample = (
  await client.query(
    "select scope, name from packages where status <> 'delisted' and not private order by random() limit 1000",
  )
).rows.map((r) => `/api/packages/@${r.scope}/${r.name}`);
await client.end();

const builds = {
  this: await startServer(path.resolve(here, '../dist'), 4794),
  other: await startServer(otherDist, 4795, otherEnv),
};
const scenarios = [
  { label: 'detail (1000 packages)', paths: sample, connections: 50 },
  { label: 'detail, cache hits', paths: [sample[0]], connections: 50 },
  { label: 'skill-md, cache hits', paths: [`${sample[0]}/skill-md`], connections: 50 },
  { label: 'track uniform', paths: sample.map((p) => `${p}/track`), connections: 50, method: 'POST' },
  {
    label: 'track uniform, 100k addresses',
    paths: sample.map((p) => `${p}/track`),
    connections: 50,
    method: 'POST',
    forwardedFor: 100_000,
  },
  { label: 'list page 1', paths: ['/api/packages'], connections: 1 },
  { label: 'search "data"', paths: ['/api/search?q=data'], connections: 1 },
  { label: 'search "pdf edi"', paths: ['/api/search?q=pdf%20edi'], connections: 1 },
];
// --only: the scenarios whose label holds this text (say, `track`).
const only = arg('only', '');
if (only) scenarios.splice(0, scenarios.length, ...scenarios.filter((sc) => sc.label.includes(only)));
const runs = scenarios.map(() => ({ this: [], other: [] }));
try {
  for (const b of Object.values(builds)) load(b.base, sample, { connections: 4 }); // warm-up
  console.log(
    `load average ${os
      .loadavg()
      .map((x) => x.toFixed(2))
      .join(', ')} at start`,
  );
  for (let round = 0; round < rounds; round += 1) {
    const order = round % 2 === 0 ? ['this', 'other'] : ['other', 'this'];
    for (const [i, sc] of scenarios.entries()) {
      for (const name of order) runs[i][name].push(load(builds[name].base, sc.paths, sc));
    }
    console.log(`round ${round + 1} of ${rounds} done`);
  }
} finally {
  for (const b of Object.values(builds)) b.child.kill('SIGTERM');
}

const median = (list) => [...list].sort((a, b) => a - b)[Math.floor(list.length / 2)];
console.log(
  `\nthis = ${path.resolve(here, '../dist')}, other = ${otherDist}; ${rounds} rounds x ${seconds} s`,
);
console.log(
  '| scenario | connections | this req/s | other req/s | this / other | this p95 ms | other p95 ms |',
);
console.log('|---|---:|---:|---:|---:|---:|---:|');
for (const [i, sc] of scenarios.entries()) {
  const rps = (name) => median(runs[i][name].map((r) => r.rps));
  const p95 = (name) => median(runs[i][name].map((r) => r.p95));
  console.log(
    `| ${sc.label} | ${sc.connections} | ${rps('this').toFixed(0)} | ${rps('other').toFixed(0)} | ${(rps('this') / rps('other')).toFixed(2)} | ${p95('this').toFixed(1)} | ${p95('other').toFixed(1)} |`,
  );
}
// Each round's this / other, to judge the spread behind the medians.
for (const [i, sc] of scenarios.entries()) {
  const ratios = runs[i].this.map((r, k) => (r.rps / (runs[i].other[k]?.rps ?? Number.NaN)).toFixed(2));
  console.log(`${sc.label}: this / other by round ${ratios.join(' ')}`);
}
console.log(
  `load average ${os
    .loadavg()
    .map((x) => x.toFixed(2))
    .join(', ')} at the end`,
);
