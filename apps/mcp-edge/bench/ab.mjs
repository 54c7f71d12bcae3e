// A/B of two edge builds under the same load, interleaved so both see the same machine:
//   node bench/ab.mjs <other-dist-dir relative to bench/> [rounds] [seconds]
// e.g. build the last commit into bench-results/base/dist, then `node bench/ab.mjs ../bench-results/base/dist`.
// Prints per round req/s and CPU µs/req of the edge, Redis and Postgres (utime + stime from /proc); run
// under the bench flock. The two builds take turns going first, round by round, so what one run leaves
// behind (Postgres writing the audit rows of the last 5 s, say) weighs on both alike.
import { randomBytes } from 'node:crypto';

const [baseDist, rounds = '4', seconds = '5'] = process.argv.slice(2);
if (!baseDist) throw new Error('usage: node bench/ab.mjs <other-dist-dir> [rounds] [seconds]');
const { createTestDatabase } = await import('@pkgreg/db/testing');
const { createClient } = await import('../dist/oauth/clients.service.js');
const { ensureActiveKey } = await import('../dist/oauth/signing-keys.service.js');
const { modern, openSession } = await import('./session.mjs');
const { cpuMs, measureServicesCpu } = await import('./cpu.mjs');
const { load, startServer, stopServers } = await import('./procs.mjs');

// AB_NODE_ARGS: node flags for the current build only (e.g. to weigh a V8 heap setting).
const currentArgs = (process.env.AB_NODE_ARGS ?? '').split(' ').filter(Boolean);
// AB_READ=1 adds resources/read of a skill:// SKILL.md served by the built registry-api (registry.mjs),
// both edges trusting a package's visibility for AB_CATALOG_TTL_MS (default 1000; 1 makes nearly every
// read ask the registry again, through the edge's registry client).
const withRead = process.env.AB_READ === '1';
const catalogTtlMs = process.env.AB_CATALOG_TTL_MS ?? '1000';
// AB_ONLY=read,info: only these scenarios. AB_MODERN=1: every request as an MCP 2026-07-28 client sends it.
const asModern = process.env.AB_MODERN === '1';
const only = process.env.AB_ONLY?.split(',');

const t = await createTestDatabase();
let registry;
try {
  await ensureActiveKey(t.db);
  const client = await createClient(t.db, {
    name: 'ab',
    scopes: [
      'pkgreg.system.read',
      'pkgreg.memory.stm.read',
      'pkgreg.memory.stm.write',
      ...(withRead ? ['pkgreg.registry.read'] : []),
    ],
  });
  if (withRead) {
    const { startBenchRegistry } = await import('./registry.mjs');
    registry = await startBenchRegistry({
      db: t.db,
      databaseUrl: t.url,
      redisUrl: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
    });
  }
  const env = {
    PKGREG_PUBLIC_BASE_URL: 'http://localhost:4100',
    DATABASE_URL: t.url,
    REDIS_URL: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
    EDGE_QUEUE_PREFIX: `pkgreg-ab:${randomBytes(4).toString('hex')}`,
    EDGE_RATE_LIMIT_PER_MINUTE: '1000000000',
    EDGE_TOKEN_TTL_SECONDS: '7200',
    LOG_LEVEL: 'silent',
    ...(registry ? { REGISTRY_URL: registry.url, EDGE_CATALOG_TTL_MS: catalogTtlMs } : {}),
  };
  const servers = {
    base: await startServer('edge', {
      env,
      dist: baseDist,
      redisPrefix: `pkgreg-ab:${randomBytes(4).toString('hex')}:`,
    }),
    current: await startServer(
      'edge',
      { env, redisPrefix: `pkgreg-ab:${randomBytes(4).toString('hex')}:` },
      currentArgs,
    ),
  };
  const url = (s) => `http://127.0.0.1:${s.port}/mcp`;
  const { namespace, headers, call } = await openSession(`${url(servers.current)}`, client);
  const put = await fetch(url(servers.current), {
    method: 'POST',
    headers,
    body: call('pkgreg.memory.v1.put', { namespace, tier: 'stm', content: 'ab entry' }),
  });
  const entryId = (await put.json()).result.entry.entryId;
  const bodies = {
    info: call('pkgreg.system.v1.info', {}),
    get: call('pkgreg.memory.v1.get', { namespace, entryId }),
    ...(registry
      ? {
          read: JSON.stringify({
            jsonrpc: '2.0',
            id: 1,
            method: 'resources/read',
            params: { uri: registry.uri },
          }),
        }
      : {}),
  };
  const results = {};
  for (let round = 0; round < Number(rounds); round++) {
    for (const scenario of Object.keys(bodies).filter((key) => !only || only.includes(key))) {
      const order = Object.entries(servers);
      if (round % 2 === 1) order.reverse();
      for (const [name, server] of order) {
        const request = asModern ? modern(bodies[scenario], headers) : { body: bodies[scenario], headers };
        const opts = { url: url(server), ...request, connections: 32 };
        if (round === 0) await load({ ...opts, duration: 2 });
        const before = cpuMs(server.child.pid);
        const servicesUsed = measureServicesCpu();
        const r = await load({ ...opts, duration: Number(seconds) });
        const us = ((cpuMs(server.child.pid) - before) * 1000) / r.total;
        const services = servicesUsed();
        const redisUs = (services.redis * 1000) / r.total;
        const pgUs = (services.postgres * 1000) / r.total;
        results[`${scenario} ${name}`] ??= [];
        results[`${scenario} ${name}`].push(us);
        results[`${scenario} ${name} (edge + Redis + Postgres)`] ??= [];
        results[`${scenario} ${name} (edge + Redis + Postgres)`].push(us + redisUs + pgUs);
        console.log(
          `round ${round + 1} ${scenario} ${name}: ${r.rps.toFixed(0)} req/s, edge ${us.toFixed(1)} µs/req, Redis ${redisUs.toFixed(1)}, Postgres ${pgUs.toFixed(1)}, non2xx ${r.non2xx}`,
        );
      }
    }
  }
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  for (const [k, xs] of Object.entries(results)) console.log(`${k}: median ${median(xs).toFixed(1)} µs/req`);
} finally {
  stopServers();
  registry?.stop();
  await t.destroy();
}
