// `pnpm --filter @pkgreg/registry-api bench:versions` (docs/benchmarks.md, "Registry: version archives").
// A skill of 80 files and ~1 MB (its archive ~1 MB: the files are incompressible) is indexed from a real
// git repository into a database of its own; the BUILT server (pinned to core 0) serves its archive.tgz
// to a keep-alive load client (its own process on core 1), round-robin with a bare node:http server that writes the
// same bytes from memory with the same headers. Figures: req/s, MB/s, and the ratio (target >= 0.8).
// Options: --duration <seconds per measurement> (5), --rounds (3), --connections (10).
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createTestDatabase } from '@pkgreg/db/testing';
import { indexSource } from '@pkgreg/indexer';
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
const duration = Number(arg('duration', '5'));
const rounds = Number(arg('rounds', '3'));
const connections = Number(arg('connections', '10'));
const PORT = 4792;
const BASELINE_PORT = 4793;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** The fixture: one skill folder of 80 files, ~1 MB, committed to a fresh git repository. */
function createFixture(root) {
  const repo = path.join(root, 'bench', 'big-skill');
  const dir = path.join(repo, 'skills', 'big');
  for (const sub of ['scripts', 'references', 'assets']) mkdirSync(path.join(dir, sub), { recursive: true });
  writeFileSync(
    path.join(dir, 'SKILL.md'),
    '---\nname: big\ndescription: A skill of 80 files.\n---\n# Big\n',
  );
  for (let i = 0; i < 79; i += 1) {
    const sub = ['scripts', 'references', 'assets'][i % 3];
    const name = sub === 'scripts' ? `tool-${i}.sh` : sub === 'references' ? `doc-${i}.md` : `blob-${i}.bin`;
    writeFileSync(path.join(dir, sub, name), randomBytes(13_000), {
      mode: sub === 'scripts' ? 0o755 : 0o644,
    });
  }
  const git = (...args) =>
    spawnSync('git', ['-c', 'user.name=b', '-c', 'user.email=b@pkgreg.invalid', ...args], { cwd: repo });
  git('init', '-q', '-b', 'main');
  git('add', '--all');
  git('commit', '-q', '-m', 'fixture');
  return repo;
}

function startPinned(args, env = {}) {
  const child = spawn('taskset', ['-c', '0', process.execPath, ...args], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  child.stdout.resume();
  return child;
}

async function waitFor(url, timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      if ((await fetch(url)).ok) return;
    } catch {}
    if (Date.now() > deadline) throw new Error(`${url} did not come up`);
    await sleep(100);
  }
}

async function stop(child) {
  if (child.exitCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await Promise.race([exited, sleep(10_000)]);
  if (child.exitCode === null) child.kill('SIGKILL');
}

function load(base, urlPath, bytes) {
  const spec = JSON.stringify({ url: base, connections, duration, paths: [urlPath], bytes });
  const r = spawnSync('taskset', ['-c', '1', process.execPath, path.join(here, 'download-load.mjs'), spec], {
    encoding: 'utf8',
  });
  if (r.status !== 0) throw new Error(`load failed: ${r.stderr}`);
  return JSON.parse(r.stdout.trim().split('\n').pop());
}

const root = mkdtempSync(path.join(os.tmpdir(), 'pkgreg-versions-bench-'));
const t = await createTestDatabase();
const children = [];
try {
  const repo = createFixture(root);
  const summary = await indexSource({ db: t.db }, { kind: 'git', locator: repo });
  const version = summary.versions[0]?.version;
  if (!version) throw new Error(`indexing made no version: ${JSON.stringify(summary)}`);
  const urlPath = `/api/packages/@bench/big/versions/${version}/archive.tgz`;

  const server = startPinned([path.join(appDir, 'dist/index.js')], {
    ...benchServerEnv(t.url, PORT),
  });
  children.push(server);
  const base = `http://127.0.0.1:${PORT}`;
  await waitFor(`${base}/healthz`);
  const archive = Buffer.from(await (await fetch(`${base}${urlPath}`)).arrayBuffer());
  const archivePath = path.join(root, 'archive.tgz');
  writeFileSync(archivePath, archive);
  const baseline = startPinned([
    path.join(here, 'baseline-server.mjs'),
    `@${archivePath}`,
    String(BASELINE_PORT),
    'application/gzip',
  ]);
  children.push(baseline);
  const baselineBase = `http://127.0.0.1:${BASELINE_PORT}`;
  await waitFor(`${baselineBase}/`);

  console.log(
    `archive of @bench/big@${version}: ${(archive.length / 1e6).toFixed(2)} MB, 80 files; ${connections} connections, ${rounds} rounds x ${duration} s; load average ${os.loadavg()[0].toFixed(2)}`,
  );
  load(base, urlPath, archive.length); // warm-up: the content cache and the connection pool
  const runs = { registry: [], baseline: [] };
  for (let round = 0; round < rounds; round += 1) {
    runs.registry.push(load(base, urlPath, archive.length));
    runs.baseline.push(load(baselineBase, '/', archive.length));
    const [r, b] = [runs.registry.at(-1), runs.baseline.at(-1)];
    const bad = r.non2xx + r.errors + r.wrongSize;
    console.log(
      `round ${round + 1}: registry ${r.rps.toFixed(0)} req/s (failed ${bad}), baseline ${b.rps.toFixed(0)} req/s`,
    );
  }
  const median = (list) => list.map((x) => x.rps).sort((a, b) => a - b)[Math.floor(list.length / 2)];
  const [reg, bas] = [median(runs.registry), median(runs.baseline)];
  const mbs = (rps) => ((rps * archive.length) / 1e6).toFixed(0);
  console.log(
    `\narchive downloads: registry ${reg.toFixed(0)} req/s (${mbs(reg)} MB/s), node:http from memory ${bas.toFixed(0)} req/s (${mbs(bas)} MB/s): ${(reg / bas).toFixed(2)}x (target >= 0.8: ${reg >= 0.8 * bas ? 'met' : 'MISSED'})`,
  );
} finally {
  for (const child of children) await stop(child);
  await t.destroy();
  rmSync(root, { recursive: true, force: true });
}
