// What every registry benchmark script does the same way: start the built server pinned to core 0,
// drive it with autocannon (load.mjs) from core 1, and take medians of rounds.
import { spawn, spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
export const fmt = (n, d = 1) => (typeof n === 'number' ? n.toFixed(d) : String(n));

/** Re-runs the calling script under flock, so two benchmarks never overlap. */
export function holdBenchLock() {
  if (process.env.PKGREG_BENCH_LOCKED) return;
  const r = spawnSync('flock', ['/tmp/pkgreg-bench.lock', process.execPath, ...process.argv.slice(1)], {
    stdio: 'inherit',
    env: { ...process.env, PKGREG_BENCH_LOCKED: '1' },
  });
  process.exit(r.status ?? 1);
}

export function startProcess(command, args, env = {}) {
  const child = spawn('taskset', ['-c', '0', command, ...args], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  child.stdout.resume();
  return child;
}

export async function waitFor(url, timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const res = await fetch(url);
      if (res.ok) return;
    } catch {}
    if (Date.now() > deadline) throw new Error(`${url} did not come up`);
    await sleep(100);
  }
}

export async function stopProcess(child) {
  if (child.exitCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await Promise.race([exited, sleep(10_000)]);
  if (child.exitCode === null) child.kill('SIGKILL');
}

/** One autocannon run from core 1: {rps, p50, p95, p99, ok, non2xx, errors}. */
export function load(base, paths, { connections, method = 'GET', seconds, headers }) {
  const spec = JSON.stringify({ url: base, connections, duration: seconds, method, paths, headers });
  const r = spawnSync('taskset', ['-c', '1', process.execPath, path.join(here, 'load.mjs'), spec], {
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  if (r.status !== 0) throw new Error(`load failed: ${r.stderr}`);
  return JSON.parse(r.stdout.trim().split('\n').pop());
}

/** The median of `key` over `runs` (the upper one of an even count). */
export const median = (runs, key) =>
  runs.map((r) => r[key]).sort((a, b) => a - b)[Math.floor(runs.length / 2)];

/** Rounds of one measurement: the median of each rate and latency, the sums of the counts. */
export function medianOfRounds(runs) {
  return {
    rps: median(runs, 'rps'),
    p50: median(runs, 'p50'),
    p95: median(runs, 'p95'),
    p99: median(runs, 'p99'),
    ok: runs.reduce((n, x) => n + x.ok, 0),
    non2xx: runs.reduce((n, x) => n + x.non2xx, 0),
    errors: runs.reduce((n, x) => n + x.errors, 0),
  };
}

/** Replaces (or appends) the section headed `heading` in a Markdown document. */
export function replaceSection(doc, heading, section) {
  const start = doc.indexOf(`\n${heading}\n`);
  if (start < 0) return `${doc.trimEnd()}\n\n${section}`;
  const next = doc.indexOf('\n## ', start + 1);
  return doc.slice(0, start + 1) + section + (next >= 0 ? doc.slice(next + 1) : '');
}
