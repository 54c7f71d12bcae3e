// `pnpm bench:private` (docs/benchmarks.md, "Private packages"): list and search latency for an
// anonymous caller and for a member of the large organisation (`megacorp`, ~1% of packages, all
// private with BENCH_PRIVATE_SHARE > 0), in process against the built services (dist), so no token is
// needed. Options: --size 100000, --rounds 30. Run with BENCH_PRIVATE_SHARE=0.1 for a share of private
// packages. Holds /tmp/pkgreg-bench.lock like the other benchmarks.
import { spawnSync } from 'node:child_process';
import { createDb } from '@pkgreg/db';
import { PUBLIC_ONLY } from '@pkgreg/registry';
import { listPackages } from '../dist/packages/list.service.js';
import { searchPackages } from '../dist/search/search.service.js';
import { BENCH_PRIVATE_ORG_SCOPE, BENCH_PRIVATE_SHARE, prepareBenchDatabase } from './bench-db.mjs';

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
const rounds = Number(arg('rounds', '30'));
const adminUrl = arg('database-url', 'postgres://postgres@127.0.0.1:5432/postgres');

const url = await prepareBenchDatabase(adminUrl, size);
const db = createDb(url, { max: 2, applicationName: 'pkgreg-bench-private' });
const member = { scopes: [BENCH_PRIVATE_ORG_SCOPE], packages: [] };
const listQuery = (page, sort = 'stars') => ({ page, pageSize: 20, sort, order: 'desc' });

const time = async (fn) => {
  const times = [];
  for (let i = 0; i < rounds; i += 1) {
    const t = performance.now();
    await fn(i);
    times.push(performance.now() - t);
  }
  times.sort((a, b) => a - b);
  const at = (q) => times[Math.min(times.length - 1, Math.floor(q * times.length))];
  return { p50: at(0.5), p95: at(0.95) };
};

const scenarios = [
  ['list page 1 (stars)', (access) => listPackages(db, listQuery(1), undefined, access)],
  ['list page 500 (stars)', (access) => listPackages(db, listQuery(500), undefined, access)],
  ['list page 1 (trending)', (access) => listPackages(db, listQuery(1, 'trending'), undefined, access)],
  ['search "data" (broad)', (access) => searchPackages(db, 'data', undefined, undefined, access)],
  ['search "code review"', (access) => searchPackages(db, 'code review', undefined, undefined, access)],
  ['search "k" (one character)', (access) => searchPackages(db, 'k', undefined, undefined, access)],
];

try {
  const share = await db
    .selectFrom('packages')
    .select((eb) => [
      eb.fn.countAll().as('all'),
      eb.fn.sum(eb.case().when('private', '=', true).then(1).else(0).end()).as('private'),
    ])
    .executeTakeFirst();
  console.log(
    `${size} packages, BENCH_PRIVATE_SHARE=${BENCH_PRIVATE_SHARE ?? 'unset'}: ${share.private} private`,
  );
  for (const [label, run] of scenarios) {
    const anonymous = await time(() => run(PUBLIC_ONLY));
    const asMember = await time(() => run(member));
    console.log(
      `${label.padEnd(30)} anonymous p50 ${anonymous.p50.toFixed(1)} p95 ${anonymous.p95.toFixed(1)} ms | member of ${BENCH_PRIVATE_ORG_SCOPE} p50 ${asMember.p50.toFixed(1)} p95 ${asMember.p95.toFixed(1)} ms`,
    );
  }
} finally {
  await db.destroy();
}
