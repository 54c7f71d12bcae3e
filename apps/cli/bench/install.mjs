// `pnpm --filter pkgreg bench` (docs/benchmarks.md, "CLI install"): `pkgreg install` of an 80-file,
// ~1 MB skill from a local registry (the built registry-api on a database of its own, the skill indexed
// from a real git repository), against `tar -xzf` of the same archive in the same rounds: wall time of
// each command as a fresh process into a fresh folder, interleaved, median of --rounds (15).
// --cli <path> (repeatable) measures other builds of dist/index.js side by side, e.g. a copy of an
// earlier build placed where it finds the same node_modules.
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
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

const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : fallback;
};
const rounds = Number(arg('rounds', '15'));
const clis = process.argv.flatMap((value, i) =>
  process.argv[i - 1] === '--cli' ? [path.resolve(value)] : [],
);
if (clis.length === 0) clis.push(path.resolve(here, '../dist/index.js'));

/** 80 files, ~1 MB: text the way skills hold it (scripts, references) and incompressible assets. */
function fixtureFiles() {
  const files = { 'skills/big/SKILL.md': skillMd(['name: big', 'description: A skill of 80 files.']) };
  for (let i = 0; i < 79; i += 1) {
    if (i % 3 === 0)
      files[`skills/big/scripts/tool-${i}.sh`] = {
        content: `#!/bin/sh\n${'echo step\n'.repeat(1200)}`,
        executable: true,
      };
    else if (i % 3 === 1)
      files[`skills/big/references/doc-${i}.md`] = `# Doc ${i}\n\n${'Guidance. '.repeat(1300)}`;
    else files[`skills/big/assets/blob-${i}.bin`] = randomBytes(13_000);
  }
  return files;
}

const root = mkdtempSync(path.join(os.tmpdir(), 'pkgreg-install-bench-'));
const t = await createTestDatabase();
let registry;
try {
  const repo = createRepo(root, 'bench', 'skills', fixtureFiles());
  const summary = await indexSource({ db: t.db }, { kind: 'git', locator: repo });
  const version = summary.versions[0]?.version;
  if (!version) throw new Error(`indexing made no version: ${JSON.stringify(summary)}`);
  registry = await startRegistry(t.url);
  const base = registry.base;
  const archive = Buffer.from(
    await (await fetch(`${base}/api/packages/@bench/big/versions/${version}/archive.tgz`)).arrayBuffer(),
  );
  const archivePath = path.join(root, 'big.tgz');
  writeFileSync(archivePath, archive);
  const env = { ...process.env, HOME: root, DO_NOT_TRACK: '1' };

  const runs = { install: clis.map(() => []), tar: [], node: [] };
  for (let round = -1; round < rounds; round += 1) {
    const installs = clis.map((cli) => {
      const project = mkdtempSync(path.join(root, 'project-'));
      const ms = timeMs(
        process.execPath,
        [cli, '--registry', base, 'install', '@bench/big', '--agent', 'claude-code'],
        { cwd: project, env },
      );
      rmSync(project, { recursive: true, force: true });
      return ms;
    });
    const out = mkdtempSync(path.join(root, 'tar-'));
    const tar = timeMs('tar', ['-xzf', archivePath, '-C', out]);
    const node = timeMs(process.execPath, ['-e', '']);
    rmSync(out, { recursive: true, force: true });
    if (round < 0) continue; // warm-up: the registry's content cache and the page cache
    for (const [i, ms] of installs.entries()) runs.install[i].push(ms);
    runs.tar.push(tar);
    runs.node.push(node);
  }
  const median = (list) => [...list].sort((a, b) => a - b)[Math.floor(list.length / 2)];
  const [tar, node] = [median(runs.tar), median(runs.node)];
  const installs = runs.install.map(median);
  const ratio = (install) =>
    `ratio install / tar -xzf: ${(install / tar).toFixed(1)}x; install minus Node's start: ${(install - node).toFixed(0)} ms`;
  const names = clis.map((cli) => (clis.length > 1 ? ` (${path.relative(process.cwd(), cli)})` : ''));
  console.log(
    `pkgreg install of @bench/big (80 files, archive ${(archive.length / 1e6).toFixed(2)} MB), ${rounds} rounds, load average ${os.loadavg()[0].toFixed(2)}:\n` +
      installs
        .map((install, i) => `  pkgreg install   ${install.toFixed(0)} ms (median)${names[i]}\n`)
        .join('') +
      `  tar -xzf         ${tar.toFixed(0)} ms\n` +
      `  node -e ''       ${node.toFixed(0)} ms (a Node process starting and exiting)\n` +
      installs.map((install, i) => `  ${ratio(install)}${names[i]}`).join('\n'),
  );
} finally {
  registry?.stop();
  await t.destroy();
  rmSync(root, { recursive: true, force: true });
}
