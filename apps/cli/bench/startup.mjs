// `pnpm --filter pkgreg bench:startup` (docs/benchmarks.md, "CLI start-up"): wall time of
// `pkgreg --version` and of `pkgreg search pdf` against a local registry (the built registry-api on a
// database of its own, a few skills indexed from a real git repository), each as a fresh process,
// against `node -e ''` in the same rounds: interleaved, median of --rounds (30).
//
// --cli <path> (repeatable) measures other builds of dist/index.js side by side, e.g. a copy of an
// earlier build placed where it finds the same node_modules.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createTestDatabase } from '@pkgreg/db/testing';
import { indexSource } from '@pkgreg/indexer';
import { createRepo, skillMd } from '@pkgreg/indexer/testing';
import { startRegistry, timeMs } from './bench-registry.mjs';

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
const clis = args.flatMap((value, i) => (args[i - 1] === '--cli' ? [path.resolve(value)] : []));
if (clis.length === 0) clis.push(path.resolve(here, '../dist/index.js'));
const rounds = Number(arg('rounds', '30'));

const root = mkdtempSync(path.join(os.tmpdir(), 'pkgreg-startup-bench-'));
const t = await createTestDatabase();
let registry;
try {
  const files = {};
  for (const name of ['pdf-tools', 'pdf-forms', 'csv-tools', 'git-helper', 'release-notes']) {
    files[`skills/${name}/SKILL.md`] = skillMd([`name: ${name}`, `description: The ${name} skill.`]);
  }
  const repo = createRepo(root, 'bench', 'skills', files);
  await indexSource({ db: t.db }, { kind: 'git', locator: repo });
  registry = await startRegistry(t.url);
  const base = registry.base;
  const env = { ...process.env, HOME: root, PKGREG_REGISTRY: base };
  const commands = [{ label: "node -e ''", args: ['-e', ''] }];
  for (const cli of clis) {
    const name = clis.length > 1 ? ` (${path.relative(process.cwd(), cli)})` : '';
    commands.push({ label: `pkgreg --version${name}`, args: [cli, '--version'] });
    commands.push({ label: `pkgreg search pdf${name}`, args: [cli, 'search', 'pdf'] });
  }
  const runs = commands.map(() => []);
  for (let round = -1; round < rounds; round += 1) {
    for (const [i, command] of commands.entries()) {
      const ms = timeMs(process.execPath, command.args, { cwd: root, env });
      if (round >= 0) runs[i].push(ms); // round -1 warms the page cache and the registry
    }
  }
  const median = (list) => [...list].sort((a, b) => a - b)[Math.floor(list.length / 2)];
  const node = median(runs[0]);
  const width = Math.max(...commands.map((command) => command.label.length));
  console.log(`CLI start-up, ${rounds} rounds, load average ${os.loadavg()[0].toFixed(2)}:`);
  for (const [i, command] of commands.entries()) {
    const ms = median(runs[i]);
    const ratio = i === 0 ? '' : `  ${(ms / node).toFixed(1)}x node -e ''`;
    console.log(`  ${command.label.padEnd(width)}  ${ms.toFixed(0).padStart(5)} ms (median)${ratio}`);
  }
} finally {
  registry?.stop();
  await t.destroy();
  rmSync(root, { recursive: true, force: true });
}
