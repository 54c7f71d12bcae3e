// Soak: one registry API, one edge and one worker (the built apps, as separate processes) under a mixed
// load — track, detail, search, memory put/get, system info, invoke — first a short closed-loop ramp to
// find the highest rate the stack sustains, then an open-model load (requests sent on a fixed schedule,
// latency measured from when each was due, so a slow answer never holds the next one back) at 70% of
// it for 10 minutes. Reports p50/p99 per endpoint, 5xx and failures, and each process's RSS.
//
//   flock /tmp/pkgreg-bench.lock node tests/stack/bench/soak.mjs
//   PKGREG_SOAK_SECONDS=60 … (shorter soak)   PKGREG_SOAK_RAMP_SECONDS=8 (each ramp step)
//   PKGREG_SOAK_FRACTION=0.7 (of the measured maximum)
//
// Needs the apps built (pnpm turbo run build --filter=@pkgreg/stack-tests...) and the local PostgreSQL
// and Redis (TEST_DATABASE_URL / TEST_REDIS_URL to use others).
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { ALL_SCOPES } from '@pkgreg/contracts';
import { Agent, request } from 'undici';
import {
  createStackDatabase,
  DEFAULT_ADMIN_DATABASE_URL,
  DEFAULT_REDIS_URL,
  dropRedisPrefix,
  EDGE_PUBLIC_BASE,
  edgeClient,
  seedPackages,
  spawnApp,
  stackQueuePrefix,
} from '../src/apps.ts';

const SOAK_SECONDS = Number(process.env.PKGREG_SOAK_SECONDS ?? 600);
const RAMP_SECONDS = Number(process.env.PKGREG_SOAK_RAMP_SECONDS ?? 8);
const FRACTION = Number(process.env.PKGREG_SOAK_FRACTION ?? 0.7);
const RAMP_CONCURRENCY = [4, 8, 16, 32, 64];
/** Requests still unanswered past which the load generator stops sending (counted as shed, not hidden). */
const MAX_OUTSTANDING = 4000;
const PACKAGES = 300;

// Share of each request kind in the mix (sums to 100).
const MIX = [
  ['track', 25],
  ['detail', 20],
  ['search', 15],
  ['memory.put', 10],
  ['memory.get', 10],
  ['system.info', 10],
  ['invoke', 10],
];
const WORDS = ['pdf', 'postgres', 'deploy', 'review', 'tests', 'docs', 'kubernetes', 'rust', 'api', 'design'];

const dispatcher = new Agent({ connections: 256, keepAliveTimeout: 30_000, pipelining: 1 });
const loadavg = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
function rssMb(pid) {
  try {
    const line = readFileSync(`/proc/${pid}/status`, 'utf8')
      .split('\n')
      .find((l) => l.startsWith('VmRSS:'));
    return Math.round(Number(line?.split(/\s+/)[1] ?? 0) / 1024);
  } catch {
    return null;
  }
}

const pick = (n) => Math.floor(Math.random() * n);
const kinds = MIX.flatMap(([kind, weight]) => Array(weight).fill(kind));

function makeRequester(ctx) {
  const { api, edge, token, namespace } = ctx;
  const entryIds = [];
  const rpc = (name, args) =>
    request(`${edge.url}/mcp`, {
      method: 'POST',
      dispatcher,
      headers: {
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
      headersTimeout: 30_000,
      bodyTimeout: 30_000,
    });
  const rest = (method, path) =>
    request(`${api.url}${path}`, { method, dispatcher, headersTimeout: 30_000, bodyTimeout: 30_000 });

  /** Sends one request of `kind`; resolves with {status, ok} (never throws). */
  return async function send(kind) {
    try {
      let res;
      switch (kind) {
        case 'track':
          res = await rest('POST', `/api/packages/@soak/p${pick(PACKAGES)}/track`);
          break;
        case 'detail':
          res = await rest('GET', `/api/packages/@soak/p${pick(PACKAGES)}`);
          break;
        case 'search':
          res = await rest('GET', `/api/search?q=${WORDS[pick(WORDS.length)]}`);
          break;
        case 'memory.put':
          res = await rpc('pkgreg.memory.v1.put', {
            namespace,
            tier: 'stm',
            content: `soak note ${randomBytes(6).toString('hex')}`,
            tags: ['soak'],
          });
          break;
        case 'memory.get':
          if (entryIds.length === 0) return send('memory.put');
          res = await rpc('pkgreg.memory.v1.get', { namespace, entryId: entryIds[pick(entryIds.length)] });
          break;
        case 'system.info':
          res = await rpc('pkgreg.system.v1.info', {});
          break;
        case 'invoke':
          res = await rpc('pkgreg.agents.v1.invoke', {
            agentId: 'engineering.workflow',
            input: { type: 'text', text: 'Design the schema, then write the tests.' },
            executionMode: 'async',
          });
          break;
      }
      const text = await res.body.text();
      let ok = res.statusCode === 200;
      if (ok && (kind.startsWith('memory') || kind === 'system.info' || kind === 'invoke')) {
        const body = JSON.parse(text);
        ok = body.result !== undefined && !body.error && body.result.isError !== true;
        if (ok && kind === 'memory.put') {
          const id = body.result.entry?.entryId;
          if (id) {
            entryIds.push(id);
            if (entryIds.length > 2000) entryIds.splice(0, 1000);
          }
        }
      }
      return { status: res.statusCode, ok };
    } catch (error) {
      return { status: 0, ok: false, error: error.code ?? error.name };
    }
  };
}

function newStats() {
  return Object.fromEntries(MIX.map(([kind]) => [kind, { lat: [], ok: 0, refused: 0, s5xx: 0, errors: 0 }]));
}

function record(stats, kind, answer, ms) {
  const s = stats[kind];
  s.lat.push(ms);
  if (answer.ok) s.ok += 1;
  else if (answer.status >= 500) s.s5xx += 1;
  else if (answer.status === 0) s.errors += 1;
  else s.refused += 1;
}

function quantile(sorted, q) {
  if (sorted.length === 0) return null;
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

function summarize(stats, seconds) {
  const rows = {};
  for (const [kind, s] of Object.entries(stats)) {
    const sorted = Float64Array.from(s.lat).sort();
    rows[kind] = {
      requests: s.lat.length,
      perSecond: Math.round((s.lat.length / seconds) * 10) / 10,
      p50: round(quantile(sorted, 0.5)),
      p99: round(quantile(sorted, 0.99)),
      max: round(sorted[sorted.length - 1] ?? null),
      ok: s.ok,
      refused: s.refused,
      s5xx: s.s5xx,
      errors: s.errors,
    };
  }
  return rows;
}
const round = (v) => (v === null ? null : Math.round(v * 10) / 10);

/** Closed loop: `concurrency` lanes, each sending its next request when the last is answered. */
async function closedLoop(send, concurrency, seconds) {
  const stats = newStats();
  const end = Date.now() + seconds * 1000;
  let ok = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (Date.now() < end) {
        const kind = kinds[pick(kinds.length)];
        const t = performance.now();
        const answer = await send(kind);
        record(stats, kind, answer, performance.now() - t);
        if (answer.ok) ok += 1;
      }
    }),
  );
  return { rate: ok / seconds, stats };
}

/**
 * Open model: request i is due at start + i / rate; its latency counts from then. A tick sends every
 * request due so far, so a slow stack meets a growing queue instead of a slower sender.
 */
async function openLoop(send, rate, seconds, onMinute) {
  const stats = newStats();
  const start = performance.now();
  const total = Math.floor(rate * seconds);
  let sent = 0;
  let outstanding = 0;
  let shed = 0;
  let nextMinute = 60_000;
  const inflight = new Set();
  while (sent < total) {
    const now = performance.now();
    const due = Math.min(total, Math.floor(((now - start) / 1000) * rate) + 1);
    for (; sent < due; sent++) {
      const scheduled = start + (sent / rate) * 1000;
      const kind = kinds[pick(kinds.length)];
      if (outstanding >= MAX_OUTSTANDING) {
        shed += 1;
        continue;
      }
      outstanding += 1;
      const p = send(kind).then((answer) => {
        outstanding -= 1;
        record(stats, kind, answer, performance.now() - scheduled);
        inflight.delete(p);
      });
      inflight.add(p);
    }
    if (now - start >= nextMinute) {
      onMinute?.(Math.round(nextMinute / 60_000), outstanding);
      nextMinute += 60_000;
    }
    await sleep(2);
  }
  await Promise.all(inflight);
  return { stats, shed, elapsed: (performance.now() - start) / 1000 };
}

async function main() {
  const database = await createStackDatabase(DEFAULT_ADMIN_DATABASE_URL);
  const services = {
    databaseUrl: database.url,
    redisUrl: DEFAULT_REDIS_URL,
    queuePrefix: stackQueuePrefix('soak'),
  };
  const processes = [];
  try {
    await seedPackages(
      services.databaseUrl,
      Array.from({ length: PACKAGES }, (_, i) => ({
        scope: 'soak',
        name: `p${i}`,
        description: `Helps with ${WORDS[i % WORDS.length]} and ${WORDS[(i * 7 + 3) % WORDS.length]} work, item ${i}.`,
      })),
    );
    // Production settings, quiet logs; limits high enough that the load measures the stack, not its quotas.
    const quiet = { NODE_ENV: 'production', LOG_LEVEL: 'warn' };
    const api = await spawnApp('registry-api', services, {
      ...quiet,
      REGISTRY_PUBLIC_URL: 'http://127.0.0.1:4000',
      WEBHOOK_SECRET_KEY: 'soak-bench-only-webhook-key-never-used-to-publish',
      DERIVED_REFRESH_INTERVAL_MS: '1000',
      DOWNLOAD_FLUSH_INTERVAL_MS: '500',
    });
    processes.push(api);
    const edge = await spawnApp('mcp-edge', services, {
      ...quiet,
      EDGE_ALLOW_LOCALHOST: 'true',
      REGISTRY_URL: api.url,
      EDGE_RATE_LIMIT_PER_MINUTE: '100000000',
      EDGE_INVOKE_PER_MINUTE: '100000000',
      EDGE_TOKEN_TTL_SECONDS: '86400',
    });
    processes.push(edge);
    const worker = await spawnApp('runtime-worker', services, {
      ...quiet,
      // Its start line (info) is how the harness knows it is up.
      LOG_LEVEL: 'info',
      REGISTRY_URL: api.url,
      LOCK_DURATION_MS: '30000',
      STALLED_INTERVAL_MS: '30000',
    });
    processes.push(worker);
    const client = await edgeClient(services, edge, ALL_SCOPES);
    const namespace = `app:${createHash('sha256').update(`${EDGE_PUBLIC_BASE}/mcp|${client.clientId}`).digest('hex')}`;
    const send = makeRequester({ api, edge, token: client.accessToken, namespace });
    const rss = () => Object.fromEntries(processes.map((p) => [p.label, rssMb(p.child.pid)]));
    const rssAtStart = rss();
    console.error(`stack up; load ${loadavg()}; RSS MB ${JSON.stringify(rssAtStart)}`);

    // Closed-loop ramp: the highest rate of successful answers over the concurrency steps.
    await closedLoop(send, 4, 3); // warm-up: JIT, pools, caches
    const ramp = [];
    for (const c of RAMP_CONCURRENCY) {
      const { rate, stats } = await closedLoop(send, c, RAMP_SECONDS);
      const s = summarize(stats, RAMP_SECONDS);
      const worstP99 = Math.max(...Object.values(s).map((r) => r.p99 ?? 0));
      ramp.push({ concurrency: c, rate: Math.round(rate), worstP99 });
      console.error(`ramp c=${c}: ${Math.round(rate)} ok/s, worst p99 ${worstP99} ms, load ${loadavg()}`);
      if (ramp.length > 1 && rate < (ramp.at(-2)?.rate ?? 0) * 1.05) break;
    }
    const max = Math.max(...ramp.map((r) => r.rate));
    const rate = Math.round(max * FRACTION);
    console.error(`maximum ${max}/s; open-model load at ${rate}/s for ${SOAK_SECONDS} s`);

    const rssSoakStart = rss();
    const loadStart = loadavg();
    const soak = await openLoop(send, rate, SOAK_SECONDS, (minute, outstanding) =>
      console.error(
        `  minute ${minute}: outstanding ${outstanding}, load ${loadavg()}, RSS ${JSON.stringify(rss())}`,
      ),
    );
    const rssSoakEnd = rss();
    const rows = summarize(soak.stats, soak.elapsed);
    const total = Object.values(rows).reduce(
      (a, r) => ({
        requests: a.requests + r.requests,
        s5xx: a.s5xx + r.s5xx,
        errors: a.errors + r.errors,
        refused: a.refused + r.refused,
      }),
      { requests: 0, s5xx: 0, errors: 0, refused: 0 },
    );
    const result = {
      date: new Date().toISOString(),
      cpus: cpus().length,
      loadAtStart: loadStart,
      loadAtEnd: loadavg(),
      ramp,
      maximum: max,
      rate,
      seconds: Math.round(soak.elapsed),
      shed: soak.shed,
      total,
      endpoints: rows,
      rssMb: { afterStart: rssAtStart, soakStart: rssSoakStart, soakEnd: rssSoakEnd },
    };
    mkdirSync(new URL('../bench-results/', import.meta.url), { recursive: true });
    writeFileSync(
      new URL(`../bench-results/soak-${Date.now()}.json`, import.meta.url),
      JSON.stringify(result, null, 2),
    );
    console.log(JSON.stringify(result, null, 2));
    console.log('\n| Endpoint | Requests | p50 ms | p99 ms | max ms | 5xx | refused | failed |');
    console.log('|---|---:|---:|---:|---:|---:|---:|---:|');
    for (const [kind, r] of Object.entries(rows)) {
      console.log(
        `| ${kind} | ${r.requests} | ${r.p50} | ${r.p99} | ${r.max} | ${r.s5xx} | ${r.refused} | ${r.errors} |`,
      );
    }
  } finally {
    await Promise.allSettled(processes.map((p) => p.stop()));
    await dispatcher.close();
    await dropRedisPrefix(services.redisUrl, services.queuePrefix).catch(() => {});
    await database.drop();
  }
}

await main();
