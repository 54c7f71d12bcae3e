// `node apps/registry-api/bench/well-known.mjs` (docs/benchmarks.md, "Registry: agent-skills discovery
// indexes (issue 31)"): what the per-process digest cache of agent-skill archives
// (src/well-known/agent-skill-archives.ts) buys. A scope of a few hundred skills (four in five are
// folders of several files, listed as archives) is indexed from a real git repository into a test
// database of its own; the built services (dist) then answer the scope's index and single packages'
// indexes in process, three ways in alternating rounds:
//   kept     the digests kept (the cache as it runs): the baseline;
//   rebuilt  no digest kept, the stored files in the content cache: what an index costs without the cache;
//   cold     no digest and no file kept: a process's first index after a start.
// Then the built server (core 0) answers both over HTTP to autocannon (core 1), digests kept, for the
// figure a request costs whole. Options: --skills 300, --rounds 15, --duration 3 (s per HTTP round).
// Holds /tmp/pkgreg-bench.lock like the other benchmarks.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createTestDatabase } from '@pkgreg/db/testing';
import { indexSource } from '@pkgreg/indexer';
import { createRepo } from '@pkgreg/indexer/testing';
import { createPgContentStore, PUBLIC_ONLY } from '@pkgreg/registry';
import { createContentCache } from '../dist/versions/content-cache.js';
import { createAgentSkillArchives } from '../dist/well-known/agent-skill-archives.js';
import { agentSkillsIndex } from '../dist/well-known/agent-skills.service.js';
import { fmt, holdBenchLock, load, medianOfRounds, startProcess, stopProcess, waitFor } from './harness.mjs';
import { benchServerEnv } from './server-env.mjs';

holdBenchLock();
const here = path.dirname(fileURLToPath(import.meta.url));
const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : fallback;
};
const skillCount = Number(arg('skills', '300'));
const rounds = Number(arg('rounds', '15'));
const duration = Number(arg('duration', '3'));
const PORT = 4796;
const SCOPE = 'bench';
/** The content cache's size in production by default (CONTENT_CACHE_MAX_MB=128). */
const CONTENT_BYTES = 128 * 1024 * 1024;

/** Text of about `bytes` bytes, the same on every run (a linear congruential generator over words). */
function prose(seed, bytes) {
  const words = ['form', 'field', 'render', 'check', 'table', 'export', 'schema', 'review', 'agent', 'step'];
  let x = seed;
  let out = '';
  while (out.length < bytes) {
    x = (x * 1103515245 + 12345) % 2147483648;
    out += `${words[x % words.length]}${x % 11 === 0 ? '.\n' : ' '}`;
  }
  return out;
}

/** `count` skill folders: one in five a lone SKILL.md, the others SKILL.md with a script, a reference and data. */
function fixtureFiles(count) {
  const files = {};
  for (let i = 0; i < count; i += 1) {
    const name = `skill-${String(i).padStart(4, '0')}`;
    files[`${name}/SKILL.md`] =
      `---\nname: ${name}\ndescription: Benchmark skill ${i}, about ${prose(i, 80).replace(/\s+/g, ' ').trim()}\n---\n# ${name}\n\n${prose(i + 1, 1500)}\n`;
    if (i % 5 === 0) continue;
    files[`${name}/scripts/run.sh`] = { content: `#!/bin/sh\necho ${name} "$@"\n`, executable: true };
    files[`${name}/reference/guide.md`] = `# Guide\n\n${prose(i + 2, 6000)}\n`;
    files[`${name}/assets/fields.json`] =
      `${JSON.stringify({ name, fields: prose(i + 3, 3000).split(' ') })}\n`;
  }
  return files;
}

/** p50 and p95 of a list of milliseconds. */
function percentiles(times) {
  const sorted = [...times].sort((a, b) => a - b);
  const at = (q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
  return { p50: at(0.5), p95: at(0.95), n: sorted.length };
}

const root = mkdtempSync(path.join(os.tmpdir(), 'pkgreg-well-known-bench-'));
const t = await createTestDatabase();
let server;
try {
  const repo = createRepo(root, SCOPE, 'skills', fixtureFiles(skillCount));
  const indexing = performance.now();
  const summary = await indexSource({ db: t.db }, { kind: 'git', locator: repo, owner: SCOPE });
  if (summary.status !== 'succeeded') throw new Error(`indexing failed: ${JSON.stringify(summary)}`);
  console.log(`indexed ${skillCount} skills in ${((performance.now() - indexing) / 1000).toFixed(1)} s`);

  const store = createPgContentStore(t.db);
  const content = createContentCache(store, CONTENT_BYTES);
  const kept = createAgentSkillArchives(t.db, content);
  const ways = {
    kept: () => kept,
    rebuilt: () => createAgentSkillArchives(t.db, content),
    cold: () => createAgentSkillArchives(t.db, createContentCache(store, CONTENT_BYTES)),
  };
  const scope = { kind: 'scope', scope: SCOPE };
  const first = await agentSkillsIndex(t.db, kept, scope, PUBLIC_ONLY);
  const archives = first.skills.filter((s) => s.type === 'archive').map((s) => s.name);
  const bodyBytes = Buffer.byteLength(JSON.stringify(first));
  console.log(
    `@${SCOPE}: ${first.skills.length} entries (${archives.length} archives), index ${fmt(bodyBytes / 1024)} KB`,
  );
  // The three ways name the same digests (the cache changes the cost, never the answer).
  for (const make of Object.values(ways)) {
    const again = await agentSkillsIndex(t.db, make(), scope, PUBLIC_ONLY);
    if (JSON.stringify(again) !== JSON.stringify(first)) throw new Error('the indexes differ');
  }

  const time = async (fn) => {
    const started = performance.now();
    await fn();
    return performance.now() - started;
  };
  const samples = { scope: {}, package: {} };
  for (const way of Object.keys(ways)) {
    samples.scope[way] = [];
    samples.package[way] = [];
  }
  const PACKAGES_PER_ROUND = 20;
  for (let round = 0; round < rounds; round += 1) {
    // The order turns each round, so no way always runs after another's cache misses.
    const order = Object.keys(ways);
    for (let k = 0; k < round % order.length; k += 1) order.push(order.shift());
    for (const way of order) {
      // Made before the clock starts: a new digest LRU allocates its 100,000 slots at once.
      const made = ways[way]();
      samples.scope[way].push(await time(() => agentSkillsIndex(t.db, made, scope, PUBLIC_ONLY)));
      for (let k = 0; k < PACKAGES_PER_ROUND; k += 1) {
        // The same packages for each way in a round.
        const name = archives[(round * PACKAGES_PER_ROUND + k) % archives.length];
        const one = { kind: 'package', scope: SCOPE, name };
        const fresh = ways[way]();
        samples.package[way].push(await time(() => agentSkillsIndex(t.db, fresh, one, PUBLIC_ONLY)));
      }
    }
  }
  const inProcess = {};
  for (const index of ['scope', 'package']) {
    inProcess[index] = {};
    for (const way of Object.keys(ways)) inProcess[index][way] = percentiles(samples[index][way]);
  }
  const inProcessRows = [];
  for (const [index, label] of [
    ['scope', `scope index (${first.skills.length} entries)`],
    ['package', 'package index (one archive)'],
  ]) {
    const base = inProcess[index].kept;
    for (const way of Object.keys(ways)) {
      const r = inProcess[index][way];
      inProcessRows.push(
        `| ${label} | ${way} | ${r.n} | ${fmt(r.p50, 2)} | ${fmt(r.p95, 2)} | ${fmt(r.p50 / base.p50, 1)}x |`,
      );
    }
  }

  // Over HTTP: the built server, digests kept; the first scope index after a start is timed alone.
  server = startProcess(process.execPath, [path.join(here, '../dist/index.js')], benchServerEnv(t.url, PORT));
  const base = `http://127.0.0.1:${PORT}`;
  await waitFor(`${base}/healthz`);
  const scopePath = `/@${SCOPE}/.well-known/agent-skills/index.json`;
  const packagePaths = archives.map((name) => `/@${SCOPE}/${name}/.well-known/agent-skills/index.json`);
  // One package's index first, so the code and the connection pool are warm, not the scope's digests.
  if (!(await fetch(`${base}${packagePaths[0]}`)).ok) throw new Error('the package index failed');
  const firstAnswer = await time(async () => {
    const res = await fetch(`${base}${scopePath}`);
    if (!res.ok) throw new Error(`the scope index answered ${res.status}`);
    await res.arrayBuffer();
  });
  load(base, [scopePath, ...packagePaths], { connections: 4, seconds: 2 });
  const http = { scope: [], package: [] };
  for (let round = 0; round < Math.min(rounds, 3); round += 1) {
    http.scope.push(load(base, [scopePath], { connections: 4, seconds: duration }));
    http.package.push(load(base, packagePaths, { connections: 4, seconds: duration }));
  }
  const httpScope = medianOfRounds(http.scope);
  const httpPackage = medianOfRounds(http.package);
  const failed = httpScope.non2xx + httpScope.errors + httpPackage.non2xx + httpPackage.errors;

  const section = `Run of ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC on ${os.cpus().length} cores (1-min load average ${os.loadavg()[0].toFixed(2)} at the end); ${skillCount} skills in one scope, ${archives.length} of them archives (four files, ~11 KB), ${rounds} rounds.

In process (the built service, \`agentSkillsIndex\`, one caller at a time), ms:

| index | digests | calls | p50 | p95 | p50 / kept |
| --- | --- | ---: | ---: | ---: | ---: |
${inProcessRows.join('\n')}

Over HTTP (built server on core 0, autocannon on core 1, 4 connections, ${Math.min(rounds, 3)} rounds of ${duration} s, medians; digests kept):

| index | req/s | p50 ms | p95 ms |
| --- | ---: | ---: | ---: |
| scope index (${fmt(bodyBytes / 1024)} KB) | ${fmt(httpScope.rps, 0)} | ${fmt(httpScope.p50)} | ${fmt(httpScope.p95)} |
| package index (${archives.length} packages, uniform) | ${fmt(httpPackage.rps, 0)} | ${fmt(httpPackage.p50)} | ${fmt(httpPackage.p95)} |

The server's first scope index after its start (every archive built and hashed, the files read from the database): ${fmt(firstAnswer)} ms. Failed requests: ${failed}.
`;
  console.log(`\n${section}`);
} finally {
  if (server) await stopProcess(server);
  await t.destroy();
  rmSync(root, { recursive: true, force: true });
}
