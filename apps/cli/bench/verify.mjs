// `node bench/verify.mjs` (docs/benchmarks.md, "Provenance"): what signed versions cost (issue 30).
// Registry side: indexing N skills from a real git repository, then the signer's passes over them
// (signatures, attestations, the transparency log and its checkpoint), per version and against the
// indexing. CLI side: `pkgreg install` of one skill with signature verification against
// `--no-verify` in the same rounds (a fresh process into a fresh folder each, interleaved), and
// `pkgreg verify` over N installed skills. Medians of --rounds (9).

import { spawnSync } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createTestDatabase } from '@pkgreg/db/testing';
import { indexSource } from '@pkgreg/indexer';
import { createRepo, skillMd } from '@pkgreg/indexer/testing';
import {
  attestPendingVersions,
  checkpoint,
  logPendingVersions,
  registerSigningKey,
  signerFromPem,
  signPendingVersions,
} from '@pkgreg/registry';
import { startRegistry, timeMs } from './bench-registry.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const cli = path.resolve(here, '../dist/index.js');

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
const rounds = Number(arg('rounds', '9'));
const skills = Number(arg('skills', '100'));
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const round1 = (x) => Math.round(x * 10) / 10;
const share = (part, whole) => Math.round((part / whole) * 1000) / 1000;

/** N skills of three files each, as skill repositories hold them. */
function fixtureFiles(n) {
  const files = {};
  for (let i = 0; i < n; i += 1) {
    const name = `skill-${String(i).padStart(3, '0')}`;
    files[`skills/${name}/SKILL.md`] = skillMd([`name: ${name}`, `description: Bench skill number ${i}.`]);
    files[`skills/${name}/scripts/run.sh`] = { content: `#!/bin/sh\necho ${i}\n`, executable: true };
    files[`skills/${name}/references/notes.md`] = `# Notes ${i}\n\n${'Guidance. '.repeat(200)}`;
  }
  return files;
}

const root = mkdtempSync(path.join(os.tmpdir(), 'pkgreg-verify-bench-'));
const t = await createTestDatabase();
let registry;
try {
  // Registry side.
  const repo = createRepo(root, 'bench', 'skills', fixtureFiles(skills));
  let started = performance.now();
  const summary = await indexSource({ db: t.db }, { kind: 'git', locator: repo, owner: 'bench' });
  const indexMs = performance.now() - started;
  if (summary.versions.length !== skills) throw new Error(`indexed ${summary.versions.length} versions`);
  const signer = signerFromPem(
    generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
  );
  await registerSigningKey(t.db, signer);
  started = performance.now();
  await signPendingVersions(t.db, signer, { limit: skills });
  const signMs = performance.now() - started;
  started = performance.now();
  await attestPendingVersions(t.db, signer, { limit: skills, builderId: 'https://registry.bench' });
  const attestMs = performance.now() - started;
  started = performance.now();
  await logPendingVersions(t.db, { limit: skills });
  await checkpoint(t.db, signer, 'registry.bench/log');
  const logMs = performance.now() - started;
  const perVersion = (ms) => round1(ms / skills);
  console.log(
    JSON.stringify({
      skills,
      indexing: { ms: Math.round(indexMs), perVersionMs: perVersion(indexMs) },
      signing: { perVersionMs: perVersion(signMs), ofIndexing: share(signMs, indexMs) },
      attesting: { perVersionMs: perVersion(attestMs), ofIndexing: share(attestMs, indexMs) },
      logging: { perVersionMs: perVersion(logMs), ofIndexing: share(logMs, indexMs) },
    }),
  );

  // CLI side.
  registry = await startRegistry(t.url);
  const base = registry.base;
  const env = { ...process.env, HOME: root, DO_NOT_TRACK: '1' };
  const install = (flags) => {
    const project = mkdtempSync(path.join(root, 'project-'));
    const ms = timeMs(
      process.execPath,
      [cli, '--registry', base, 'install', '@bench/skill-000', '--agent', 'claude-code', ...flags],
      { cwd: project, env },
    );
    rmSync(project, { recursive: true, force: true });
    return ms;
  };
  const verified = [];
  const unverified = [];
  for (let round = -1; round < rounds; round += 1) {
    const a = install([]);
    const b = install(['--no-verify']);
    if (round >= 0) {
      verified.push(a);
      unverified.push(b);
    }
  }
  const all = mkdtempSync(path.join(root, 'project-all-'));
  const names = Array.from({ length: skills }, (_, i) => `@bench/skill-${String(i).padStart(3, '0')}`);
  timeMs(process.execPath, [cli, '--registry', base, 'install', ...names, '--agent', 'claude-code'], {
    cwd: all,
    env,
  });
  const verifies = [];
  const lists = [];
  for (let round = -1; round < rounds; round += 1) {
    const v = timeMs(process.execPath, [cli, '--registry', base, 'verify'], { cwd: all, env });
    const l = timeMs(process.execPath, [cli, '--registry', base, 'list'], { cwd: all, env });
    if (round >= 0) {
      verifies.push(v);
      lists.push(l);
    }
  }
  console.log(
    JSON.stringify({
      install: {
        verifiedMs: round1(median(verified)),
        noVerifyMs: round1(median(unverified)),
        ratio: share(median(verified), median(unverified)),
      },
      verify: {
        packages: skills,
        ms: round1(median(verifies)),
        perPackageMs: round1(median(verifies) / skills),
        listMs: round1(median(lists)),
      },
      rounds,
      load: os.loadavg().map((x) => round1(x)),
      at: new Date().toISOString(),
    }),
  );
} finally {
  registry?.stop();
  await t.destroy();
  rmSync(root, { recursive: true, force: true });
}
