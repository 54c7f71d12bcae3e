#!/usr/bin/env node
// pnpm bench:runtime — BullMQ enqueue→start latency and no-op throughput at concurrency 1 and 50,
// beside `redis-benchmark -t incr` on the same Redis in the same run (the ceiling a queue built on
// Redis commands can approach). Run it under `flock /tmp/pkgreg-bench.lock`.
//
// Topology as deployed: the producer (here: this process, like the edge) and the worker (a child
// process, like apps/runtime-worker) are separate processes, connected with the settings of
// @pkgreg/tasks (producer: enableOfflineQueue false; worker: maxRetriesPerRequest null). The job does
// nothing, so the figures are the queue's own cost; agent runs add their work on top.
//
// Env: REDIS_URL (default redis://127.0.0.1:6379), BENCH_LATENCY_JOBS (1000), BENCH_LATENCY_INTERVAL_MS (5),
// BENCH_THROUGHPUT_JOBS (20000).

import { execFileSync, fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { cpus, loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { connectionOptions } from '@pkgreg/tasks';
import { Queue } from 'bullmq';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const LATENCY_JOBS = Number(process.env.BENCH_LATENCY_JOBS ?? 1000);
const THROUGHPUT_JOBS = Number(process.env.BENCH_THROUGHPUT_JOBS ?? 20000);
const INTERVAL_MS = Number(process.env.BENCH_LATENCY_INTERVAL_MS ?? 5);
const QUEUE = 'pkgreg-bench-noop';
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const here = dirname(fileURLToPath(import.meta.url));
const now = () => performance.timeOrigin + performance.now();

function percentile(sorted, p) {
  if (sorted.length === 0) return Number.NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i];
}

function incrRate() {
  const url = new URL(REDIS_URL);
  const out = execFileSync(
    'redis-benchmark',
    ['-h', url.hostname, '-p', url.port || '6379', '-t', 'incr', '-n', '200000', '-c', '50', '-q'],
    { encoding: 'utf8' },
  );
  const match = out.match(/INCR:\s*([\d.]+)\s*requests per second/i);
  if (!match) throw new Error(`could not read redis-benchmark output: ${out}`);
  return Number(match[1]);
}

function message(child, type) {
  return new Promise((resolve, reject) => {
    const onMessage = (msg) => {
      if (msg.type === type) {
        child.off('message', onMessage);
        resolve(msg);
      }
    };
    child.on('message', onMessage);
    child.once('exit', (code) => reject(new Error(`worker exited ${code}`)));
  });
}

async function run(concurrency) {
  const prefix = `pkgreg-bench:${randomBytes(4).toString('hex')}`;
  const queue = new Queue(QUEUE, {
    connection: connectionOptions(REDIS_URL, { enableOfflineQueue: false }),
    prefix,
    defaultJobOptions: { removeOnComplete: { count: 1000 }, removeOnFail: { count: 1000 } },
  });
  await queue.waitUntilReady();
  const child = fork(join(here, 'noop-worker.mjs'), [QUEUE, prefix, String(concurrency), REDIS_URL], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  await message(child, 'ready');

  // 1) Latency: jobs arrive paced (one every INTERVAL ms, far below capacity) at an idle, waiting
  //    worker, so the figure is enqueue→processor start, not time spent queued behind other jobs.
  const latencyPhase = async (count) => {
    child.send({ type: 'expect', count });
    const done = message(child, 'done');
    for (let i = 0; i < count; i += 1) {
      await queue.add('noop', { t: now() });
      await sleep(INTERVAL_MS);
    }
    return (await done).latencies;
  };
  await latencyPhase(200); // warm-up
  const sorted = (await latencyPhase(LATENCY_JOBS)).sort((a, b) => a - b);

  // 2) Throughput: the queue is filled while paused, then drained by the worker.
  await queue.pause();
  for (let i = 0; i < THROUGHPUT_JOBS; i += 1000) {
    const n = Math.min(1000, THROUGHPUT_JOBS - i);
    await queue.addBulk(Array.from({ length: n }, () => ({ name: 'noop', data: {} })));
  }
  child.send({ type: 'expect', count: THROUGHPUT_JOBS });
  const drained = message(child, 'done');
  const start = performance.now();
  await queue.resume();
  await drained;
  const seconds = (performance.now() - start) / 1000;

  child.send({ type: 'close' });
  await once(child, 'exit');
  await queue.obliterate({ force: true });
  await queue.close();
  return {
    concurrency,
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    jobsPerSecond: THROUGHPUT_JOBS / seconds,
  };
}

const load = loadavg()[0];
const incr = incrRate();
const results = [];
for (const c of [1, 50]) results.push(await run(c));
const incrAfter = incrRate();
const incrMean = (incr + incrAfter) / 2;

const fmt = (n, d = 2) => n.toFixed(d);
console.log(`\nload average (1 min) at start: ${fmt(load)} on ${cpus().length} cores`);
console.log(
  `redis-benchmark -t incr -n 200000 -c 50: ${fmt(incr, 0)} / ${fmt(incrAfter, 0)} req/s (before / after)`,
);
console.log('\n| concurrency | enqueue→start p50 (ms) | p99 (ms) | no-op jobs/s | jobs/s ÷ INCR/s |');
console.log('|---|---|---|---|---|');
for (const r of results) {
  console.log(
    `| ${r.concurrency} | ${fmt(r.p50)} | ${fmt(r.p99)} | ${fmt(r.jobsPerSecond, 0)} | ${fmt(r.jobsPerSecond / incrMean, 3)} |`,
  );
}
const c50 = results.find((r) => r.concurrency === 50);
const p50ok = results.every((r) => r.p50 < 5);
const ratioOk = c50 && c50.jobsPerSecond >= 0.1 * incrMean;
console.log(
  `\ntargets: enqueue→start p50 < 5 ms: ${p50ok ? 'met' : 'MISSED'}; ` +
    `no-op jobs/s at concurrency 50 >= 0.1 × INCR/s: ${ratioOk ? 'met' : 'MISSED'}`,
);
