import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readSkillFolder } from '../dist/index.js';

// The test corpus (test/corpus): malicious skills that must be caught and benign look-alikes, with
// what the scan must report on each (expected.json). Shared by the tests and the bench.

export const CORPUS_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', 'test', 'corpus');

/** Every case: `malicious/<name>` or `benign/<name>`, its files (links added) and what is expected. */
export async function loadCorpus(dir = CORPUS_DIR) {
  const { cases: expected } = JSON.parse(readFileSync(join(dir, 'expected.json'), 'utf8'));
  const cases = [];
  for (const kind of ['malicious', 'benign']) {
    for (const name of readdirSync(join(dir, kind)).sort()) {
      const id = `${kind}/${name}`;
      const want = expected[id];
      if (!want) throw new Error(`corpus case ${id} has no entry in expected.json`);
      const files = await readSkillFolder(join(dir, kind, name));
      for (const [path, linkTarget] of Object.entries(want.links ?? {})) {
        files.push({ path, bytes: new Uint8Array(), linkTarget });
      }
      cases.push({ id, kind, files, expected: want });
    }
  }
  const missing = Object.keys(expected).filter((id) => !cases.some((c) => c.id === id));
  if (missing.length > 0)
    throw new Error(`expected.json names cases that do not exist: ${missing.join(', ')}`);
  return cases;
}

const key = (f) => `${f.rule} ${f.file}:${f.line}`;

/** Recall, precision and false positives of scan results against the corpus's expectations. */
export function corpusFigures(results) {
  let expectedFindings = 0;
  let matched = 0;
  let reported = 0;
  let maliciousCaught = 0;
  let malicious = 0;
  let benign = 0;
  let benignFlagged = 0;
  let benignAnyFinding = 0;
  const missed = [];
  const unexpected = [];
  const order = ['none', 'low', 'medium', 'high'];
  for (const { id, kind, expected, result } of results) {
    const want = new Map(expected.findings.map((f) => [key(f), f]));
    const got = new Map(result.findings.map((f) => [key(f), f]));
    expectedFindings += want.size;
    reported += got.size;
    for (const [k, f] of want) {
      if (got.get(k)?.severity === f.severity) matched += 1;
      else missed.push(`${id}: ${f.severity} ${k}`);
    }
    for (const [k, f] of got)
      if (want.get(k)?.severity !== f.severity) unexpected.push(`${id}: ${f.severity} ${k}`);
    if (kind === 'malicious') {
      malicious += 1;
      if (order.indexOf(result.risk) >= order.indexOf(expected.risk) && result.risk !== 'none')
        maliciousCaught += 1;
    } else {
      benign += 1;
      if (order.indexOf(result.risk) >= order.indexOf('medium')) benignFlagged += 1;
      if (result.findings.length > 0) benignAnyFinding += 1;
    }
  }
  return {
    malicious,
    maliciousCaught,
    benign,
    benignFlagged,
    benignAnyFinding,
    expectedFindings,
    matched,
    reported,
    recall: expectedFindings === 0 ? 1 : matched / expectedFindings,
    precision: reported === 0 ? 1 : matched / reported,
    missed,
    unexpected,
  };
}
