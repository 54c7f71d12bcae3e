// Indexing throughput on a local git repository of N skills: first index, no-op re-index, and a
// re-index after one SKILL.md changed. Real git, real Postgres (own database), the built package.
// Run: flock /tmp/pkgreg-bench.lock pnpm --filter @pkgreg/indexer bench [N]
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestDatabase } from '@pkgreg/db/testing';
import { indexSource } from '../dist/index.js';

const count = Number(process.argv[2] ?? 300);
const root = mkdtempSync(join(tmpdir(), 'pkgreg-indexer-bench-'));
const repo = join(root, 'bench-owner', 'skills');
const git = (...args) =>
  execFileSync('git', ['-c', 'user.name=b', '-c', 'user.email=b@pkgreg.invalid', ...args], { cwd: repo });

const body = (i, edition) =>
  `---\nname: skill-${i}\ndescription: Benchmark skill number ${i}, edition ${edition}.\nallowed-tools: Read Grep\n` +
  `metadata:\n  kind: skill\n  tags: bench, load\n  version: 1.0.${edition}\n---\n# Skill ${i}\n\n` +
  'Step one: read the [guide](references/guide.md). Step two: do the work carefully.\n'.repeat(20);

mkdirSync(repo, { recursive: true });
for (let i = 0; i < count; i += 1) {
  mkdirSync(join(repo, `skills/skill-${i}/references`), { recursive: true });
  writeFileSync(join(repo, `skills/skill-${i}/SKILL.md`), body(i, 0));
  writeFileSync(join(repo, `skills/skill-${i}/references/guide.md`), `# Guide ${i}\n`);
}
git('init', '-q', '-b', 'main');
git('add', '--all');
git('commit', '-q', '-m', 'bench');

const t = await createTestDatabase();
try {
  const time = async (label) => {
    const started = performance.now();
    const s = await indexSource({ db: t.db }, { kind: 'git', locator: repo });
    const ms = performance.now() - started;
    console.log(
      `${label.padEnd(22)} ${ms.toFixed(0).padStart(6)} ms  (${((count / ms) * 1000).toFixed(0)} skills/s)  ` +
        `indexed=${s.indexed} updated=${s.updated} unchanged=${s.unchanged}`,
    );
  };
  console.log(`local git repository with ${count} skills`);
  await time('first index');
  await time('re-index, no change');
  writeFileSync(join(repo, 'skills/skill-0/SKILL.md'), body(0, 1));
  git('commit', '-q', '-am', 'edit one');
  await time('re-index, one changed');
} finally {
  await t.destroy();
  rmSync(root, { recursive: true, force: true });
}
