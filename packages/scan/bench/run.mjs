// The risk scan measured (docs/benchmarks.md, "Risk scan"):
//   flock /tmp/pkgreg-bench.lock pnpm --filter @pkgreg/scan bench -- <skill folder or repository>...
// (the package script takes the lock itself). For each path: its skill folders (every folder holding a
// SKILL.md; hidden folders and node_modules skipped, nested skills cut out, as the indexer does), the
// findings by severity and every medium or high one; then recall and false positives on the test corpus;
// then the scan's cost in ms per MB, the median of several rounds over everything read (the real skills
// and the committed corpus; the generated encoded copies apart). SCAN_BENCH_BASELINE=<a dist folder of
// @pkgreg/scan> (e.g. main's, built elsewhere) scans the same files with it in the same rounds, for the
// ratio.

import { existsSync } from 'node:fs';
import { basename, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { findSkillFolders, readSkillFolder, scanVersion } from '../dist/index.js';
import { corpusFigures, loadCorpus } from './corpus.mjs';

const ROUNDS = Number(process.env.SCAN_BENCH_ROUNDS ?? 5);
const args = process.argv.slice(2).filter((a) => a !== '--');
const pct = (x) => `${(100 * x).toFixed(1)}%`;
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const loaded = [];
for (const arg of args) {
  const root = resolve(process.env.INIT_CWD ?? process.cwd(), arg);
  if (!existsSync(root)) {
    console.error(`no such path: ${root}`);
    process.exit(2);
  }
  const folders = existsSync(resolve(root, 'SKILL.md')) ? [root] : await findSkillFolders(root);
  const skills = [];
  for (const dir of folders)
    skills.push({
      dir,
      name: dir === root ? basename(root) : dir.slice(root.length + 1),
      files: await readSkillFolder(dir),
    });
  loaded.push({ root, skills });
}

// Warm-up: secretlint's rules and the regular expressions compile on first use.
const warm = await loadCorpus();
for (const c of warm) await scanVersion(c.files);

console.log(`Risk scan bench, ${new Date().toISOString()}, node ${process.version}\n`);
let realHigh = 0;
for (const { root, skills } of loaded) {
  const bySeverity = { low: 0, medium: 0, high: 0 };
  const byRisk = { none: 0, low: 0, medium: 0, high: 0 };
  let bytes = 0;
  let files = 0;
  const listed = [];
  for (const skill of skills) {
    const result = await scanVersion(skill.files);
    byRisk[result.risk] += 1;
    bytes += result.stats.bytes;
    files += result.stats.files;
    for (const f of result.findings) {
      bySeverity[f.severity] += 1;
      if (f.severity !== 'low')
        listed.push(`    ${f.severity} ${f.rule} ${skill.name}/${f.file}:${f.line ?? '-'}  ${f.excerpt}`);
      if (f.severity === 'high') realHigh += 1;
    }
  }
  console.log(`${root}: ${skills.length} skills, ${files} files, ${(bytes / 1e6).toFixed(2)} MB`);
  console.log(`  findings: ${bySeverity.high} high, ${bySeverity.medium} medium, ${bySeverity.low} low`);
  console.log(
    `  skills by risk: ${byRisk.high} high, ${byRisk.medium} medium, ${byRisk.low} low, ${byRisk.none} none`,
  );
  for (const line of listed) console.log(line);
  console.log('');
}

const results = [];
for (const c of warm) results.push({ ...c, result: await scanVersion(c.files) });
const figures = corpusFigures(results);
console.log(`Corpus (packages/scan/test/corpus): ${figures.malicious} malicious, ${figures.benign} benign`);
console.log(
  `  recall: ${figures.maliciousCaught}/${figures.malicious} malicious skills caught at their expected risk (${pct(figures.maliciousCaught / figures.malicious)}); ${figures.matched}/${figures.expectedFindings} expected findings at their rule, file, line and severity (${pct(figures.recall)})`,
);
console.log(
  `  precision: ${figures.matched}/${figures.reported} findings expected (${pct(figures.precision)}); benign look-alikes flagged medium or high: ${figures.benignFlagged}/${figures.benign} (any finding, low included: ${figures.benignAnyFinding})`,
);
// Per encoding: the committed cases written again in it (bench/corpus.mjs), and the rules they catch.
const byEncoding = new Map();
for (const r of results.filter((x) => x.encoding)) {
  const entry = byEncoding.get(r.encoding) ?? [];
  entry.push(r);
  byEncoding.set(r.encoding, entry);
}
for (const [encoding, rs] of byEncoding) {
  const f = corpusFigures(rs);
  const rules = new Set(
    rs.flatMap((r) => r.expected.findings.filter((x) => x.encoding === encoding).map((x) => x.rule)),
  );
  console.log(
    `  ${encoding}: ${f.maliciousCaught}/${f.malicious} malicious caught, ${f.matched}/${f.expectedFindings} findings (${pct(f.recall)}) naming the encoding, ${rules.size} rules; benign flagged ${f.benignFlagged}/${f.benign}`,
  );
}
for (const m of figures.missed) console.log(`  missed: ${m}`);
for (const u of figures.unexpected) console.log(`  unexpected: ${u}`);

// Cost: every skill of every path and the committed corpus, scanned ROUNDS times; the median round.
const baseline = process.env.SCAN_BENCH_BASELINE
  ? (await import(resolve(process.env.SCAN_BENCH_BASELINE, 'index.js'))).scanVersion
  : null;
const all = [
  ...loaded.flatMap((l) => l.skills.map((s) => s.files)),
  ...warm.filter((c) => !c.generated).map((c) => c.files),
];
const encoded = warm.filter((c) => c.generated).map((c) => c.files);
const sizeOf = (sets) =>
  sets.reduce((sum, files) => sum + files.reduce((s, f) => s + f.bytes.length, 0), 0) / (1024 * 1024);
const timed = async (scan, sets, options) => {
  const started = performance.now();
  for (const files of sets) await scan(files, options);
  return performance.now() - started;
};
const rounds = [];
const noSecrets = [];
const base = [];
const encodedRounds = [];
if (baseline) for (const files of all) await baseline(files);
for (let round = 0; round < ROUNDS; round += 1) {
  rounds.push(await timed(scanVersion, all));
  noSecrets.push(await timed(scanVersion, all, { secrets: false }));
  if (baseline) base.push(await timed(baseline, all));
  encodedRounds.push(await timed(scanVersion, encoded));
}
const ms = median(rounds);
const mb = sizeOf(all);
console.log(
  `\nCost: ${all.length} skill folders, ${mb.toFixed(2)} MiB, median of ${ROUNDS} rounds ${ms.toFixed(0)} ms = ${(ms / mb).toFixed(1)} ms per MiB (${(median(noSecrets) / mb).toFixed(1)} ms per MiB without secretlint); rounds: ${rounds.map((r) => r.toFixed(0)).join(', ')} ms`,
);
if (baseline) {
  // Paired rounds: each ratio is taken within one round, so load that comes and goes on a shared
  // machine touches both sides alike; the median ratio and the fastest rounds' ratio are given.
  const ratios = rounds.map((r, i) => r / (base[i] ?? r));
  console.log(
    `  baseline (${process.env.SCAN_BENCH_BASELINE}): ${(median(base) / mb).toFixed(1)} ms per MiB; this scan costs ${median(ratios).toFixed(2)}x (median of paired rounds), ${(Math.min(...rounds) / Math.min(...base)).toFixed(2)}x (fastest rounds: ${(Math.min(...rounds) / mb).toFixed(1)} against ${(Math.min(...base) / mb).toFixed(1)} ms per MiB); rounds: ${base.map((r) => r.toFixed(0)).join(', ')} ms`,
  );
}
const encodedMb = sizeOf(encoded);
console.log(
  `  generated cases (encodings, archives): ${encoded.length} folders, ${encodedMb.toFixed(2)} MiB, ${(median(encodedRounds) / encodedMb).toFixed(1)} ms per MiB`,
);
console.log(`Official skills with a high finding: ${realHigh}`);
if (realHigh > 0) process.exitCode = 1;
