// Several edge builds side by side under the same load, for ablations (a line disabled in a copy of dist)
// and A/Bs of more than two builds:
//   node bench/abn.mjs <dist> <dist> [<dist>…]   (dirs relative to bench/, e.g. ../dist ../bench-results/x/dist)
// Run under the bench flock. Each round loads every build in turn for ABN_SECONDS (default 5), the order
// reversed every other round; prints per build the median req/s, CPU µs per request (utime + stime), and
// the median of its rounds' req/s over the first build's. List the first build twice (a copy of its dist)
// to see what two processes of one build differ by: on a noisy VM it can be ±10%.
// ABN_ROUNDS (default 6), ABN_ONLY=info,read,info26,read26 (default info,read), ABN_VERBOSE=1: every round.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';

const dists = process.argv.slice(2);
if (dists.length < 2) throw new Error('usage: node bench/abn.mjs <dist> <dist> [<dist>…]');
const SECONDS = Number(process.env.ABN_SECONDS ?? 5);
const ROUNDS = Number(process.env.ABN_ROUNDS ?? 6);
const scenarios = (process.env.ABN_ONLY ?? 'info,read').split(',');
const { createTestDatabase } = await import('@pkgreg/db/testing');
const { createClient } = await import('../dist/oauth/clients.service.js');
const { ensureActiveKey } = await import('../dist/oauth/signing-keys.service.js');
const { modern, openSession } = await import('./session.mjs');
const { cpuMs } = await import('./cpu.mjs');
const { load, startServer, stopServers } = await import('./procs.mjs');
const { startBenchRegistry } = await import('./registry.mjs');

function userSys(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return [Number(fields[11]) * 10, Number(fields[12]) * 10];
}
const median = (xs) => xs.slice().sort((a, b) => a - b)[xs.length >> 1];

const t = await createTestDatabase();
let registry;
try {
  await ensureActiveKey(t.db);
  const client = await createClient(t.db, {
    name: 'abn',
    scopes: ['pkgreg.system.read', 'pkgreg.registry.read'],
  });
  const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
  registry = await startBenchRegistry({ db: t.db, databaseUrl: t.url, redisUrl });
  const env = {
    PKGREG_PUBLIC_BASE_URL: 'http://localhost:4100',
    DATABASE_URL: t.url,
    REDIS_URL: redisUrl,
    EDGE_QUEUE_PREFIX: `pkgreg-abn:${randomBytes(4).toString('hex')}`,
    EDGE_RATE_LIMIT_PER_MINUTE: '1000000000',
    EDGE_TOKEN_TTL_SECONDS: '7200',
    LOG_LEVEL: 'silent',
    REGISTRY_URL: registry.url,
  };
  const edges = [];
  for (const dist of dists) {
    edges.push(
      await startServer('edge', { env, dist, redisPrefix: `pkgreg-abn:${randomBytes(4).toString('hex')}:` }),
    );
  }
  const { headers, call } = await openSession(`http://127.0.0.1:${edges[0].port}/mcp`, client);
  const info = call('pkgreg.system.v1.info', {});
  const read = JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'resources/read',
    params: { uri: registry.uri },
  });
  const requests = {
    info: { body: info, headers },
    read: { body: read, headers },
    info26: modern(info, headers),
    read26: modern(read, headers),
  };
  // scenario → build → [{ rps, cpu }] per round
  const results = Object.fromEntries(scenarios.map((s) => [s, edges.map(() => [])]));
  for (let round = 0; round < ROUNDS; round++) {
    for (const scenario of scenarios) {
      const order = edges.map((_, i) => i);
      if (round % 2) order.reverse();
      for (const i of order) {
        const { child, port } = edges[i];
        const cpuBefore = cpuMs(child.pid);
        const usBefore = userSys(child.pid);
        const out = await load({
          url: `http://127.0.0.1:${port}/mcp`,
          ...requests[scenario],
          connections: 32,
          duration: SECONDS,
        });
        if (out.non2xx || out.errors) throw new Error(`${dists[i]} ${scenario}: ${JSON.stringify(out)}`);
        const cpu = ((cpuMs(child.pid) - cpuBefore) * 1000) / out.total;
        results[scenario][i].push({ rps: out.rps, cpu });
        if (process.env.ABN_VERBOSE === '1') {
          const [user, sys] = userSys(child.pid).map((v, k) => ((v - usBefore[k]) * 1000) / out.total);
          console.log(
            `  round ${round + 1} ${scenario} ${dists[i]}: ${Math.round(out.rps)} req/s, user ${user.toFixed(1)} sys ${sys.toFixed(1)} µs/req`,
          );
        }
      }
    }
  }
  for (const scenario of scenarios) {
    const first = results[scenario][0];
    dists.forEach((dist, i) => {
      const rows = results[scenario][i];
      const paired = median(rows.map((r, round) => r.rps / first[round].rps));
      console.log(
        `${scenario} ${dist}: ${Math.round(median(rows.map((r) => r.rps)))} req/s, ${median(rows.map((r) => r.cpu)).toFixed(1)} µs/req, paired vs first ${paired.toFixed(3)}`,
      );
    });
  }
} finally {
  stopServers();
  registry?.stop();
  await t.destroy();
}
