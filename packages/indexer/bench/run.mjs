// Indexing a local git repository of N skills x 10 files (docs/benchmarks.md, Indexer): first index,
// unchanged re-index, one skill changed, and the bytes stored over three versions of every skill
// (dedup). Baseline in the same run: `git archive HEAD | tar -x` of the same repository, the cost of
// merely reading every file out of git. Real git, real Postgres (own database), the built package.
// Run: flock /tmp/pkgreg-bench.lock pnpm --filter @pkgreg/indexer bench [N]
import { execFileSync, execSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestDatabase } from '@pkgreg/db/testing';
import { sql } from 'kysely';
import { indexSource } from '../dist/index.js';

const count = Number(process.argv[2] ?? 1000);
const root = mkdtempSync(join(tmpdir(), 'pkgreg-indexer-bench-'));
const repo = join(root, 'bench-owner', 'skills');
const git = (...args) =>
  execFileSync('git', ['-c', 'user.name=b', '-c', 'user.email=b@pkgreg.invalid', ...args], { cwd: repo });

const skillMd = (i, edition) =>
  `---\nname: skill-${i}\ndescription: Benchmark skill number ${i}, edition ${edition}.\nallowed-tools: Read Grep\n` +
  `metadata:\n  kind: skill\n  tags: bench, load\n---\n# Skill ${i}\n\n` +
  'Step one: read the [guide](references/guide.md). Step two: run scripts/run.sh carefully.\n'.repeat(20);

/** Ten files a skill, 4-40 KB of text and a binary asset; the shared ones are the same in every skill. */
function writeSkill(i, edition) {
  const dir = join(repo, `skills/skill-${i}`);
  for (const sub of ['scripts', 'references', 'assets']) mkdirSync(join(dir, sub), { recursive: true });
  writeFileSync(join(dir, 'SKILL.md'), skillMd(i, edition));
  writeFileSync(join(dir, 'scripts/run.sh'), `#!/bin/sh\n# skill ${i} edition ${edition}\necho run\n`, {
    mode: 0o755,
  });
  writeFileSync(join(dir, 'scripts/helper.py'), `# helper of skill ${i}\n${'print("step")\n'.repeat(200)}`);
  writeFileSync(join(dir, 'scripts/common.py'), `# shared by every skill\n${'def f(): pass\n'.repeat(300)}`);
  writeFileSync(
    join(dir, 'references/guide.md'),
    `# Guide ${i}\n\n${'A paragraph of guidance. '.repeat(400)}`,
  );
  writeFileSync(join(dir, 'references/api.md'), `# API ${i}\n\n${'`call(x)` returns y. '.repeat(300)}`);
  writeFileSync(join(dir, 'references/forms.md'), `# Forms (shared)\n\n${'Field by field. '.repeat(500)}`);
  writeFileSync(join(dir, 'assets/template.txt'), `Template ${i} edition ${edition}\n${'-'.repeat(2000)}\n`);
  writeFileSync(join(dir, 'assets/logo.bin'), Buffer.alloc(4096, i % 251));
  writeFileSync(join(dir, 'LICENSE'), 'MIT License\n\nCopyright (c) 2026 Bench\n');
}

function commitAll(message) {
  git('add', '--all');
  git('commit', '-q', '-m', message);
}

mkdirSync(repo, { recursive: true });
git('init', '-q', '-b', 'main');
for (let i = 0; i < count; i += 1) writeSkill(i, 0);
commitAll('bench');
const files = Number(execSync('git ls-files | wc -l', { cwd: repo }).toString().trim());
const treeBytes = Number(
  execSync("git ls-tree -r -l HEAD | awk '{s+=$4} END {print s}'", { cwd: repo }).toString().trim(),
);

/** Milliseconds of `git archive HEAD | tar -x`, best of three. */
function baselineMs() {
  let best = Number.POSITIVE_INFINITY;
  for (let round = 0; round < 3; round += 1) {
    const out = mkdtempSync(join(root, 'archive-'));
    const started = performance.now();
    execSync(`git archive HEAD | tar -x -C ${out}`, { cwd: repo });
    best = Math.min(best, performance.now() - started);
    rmSync(out, { recursive: true, force: true });
  }
  return best;
}

const t = await createTestDatabase();
try {
  const base = baselineMs();
  console.log(
    `local git repository: ${count} skills, ${files} files, ${(treeBytes / 1e6).toFixed(1)} MB; load average ${loadavg()[0].toFixed(2)}`,
  );
  console.log(`baseline git archive | tar -x: ${base.toFixed(0)} ms`);
  const time = async (label) => {
    const started = performance.now();
    const s = await indexSource({ db: t.db }, { kind: 'git', locator: repo });
    const ms = performance.now() - started;
    console.log(
      `${label.padEnd(26)} ${ms.toFixed(0).padStart(6)} ms  ${((count / ms) * 1000).toFixed(0).padStart(5)} skills/s  ` +
        `${(ms / base).toFixed(2)}x baseline  indexed=${s.indexed} updated=${s.updated} unchanged=${s.unchanged} versions=${s.versions.length}`,
    );
    return s;
  };
  await time('first index');
  await time('re-index, no change');
  writeSkill(0, 1);
  commitAll('edit one');
  await time('re-index, one skill changed');
  // Two more editions of every skill: three versions of each over the run.
  for (const edition of [1, 2]) {
    for (let i = 0; i < count; i += 1) writeSkill(i, edition);
    commitAll(`edition ${edition}`);
    await time(`re-index, edition ${edition} of all`);
  }

  const stored = await sql`
    select (select sum(total_bytes) from package_versions)::bigint as indexed,
      (select count(*) from package_versions)::int as versions,
      (select sum(size) from content_blobs b where exists
        (select 1 from package_version_files f where f.sha256 = b.sha256))::bigint as file_bytes,
      (select sum(size) from content_blobs b where exists
        (select 1 from package_versions v where v.archive_sha256 = b.sha256))::bigint as archive_bytes,
      pg_total_relation_size('content_blobs')::bigint as on_disk`.execute(t.db);
  const row = stored.rows[0];
  const mb = (n) => `${(Number(n) / 1e6).toFixed(1)} MB`;
  console.log(
    `over ${row.versions} versions: bytes indexed ${mb(row.indexed)}; stored once per hash ${mb(row.file_bytes)} ` +
      `(${(Number(row.file_bytes) / Number(row.indexed)).toFixed(3)}x) + archives ${mb(row.archive_bytes)}; ` +
      `content_blobs on disk ${mb(row.on_disk)} (${(Number(row.on_disk) / Number(row.indexed)).toFixed(3)}x)`,
  );
} finally {
  await t.destroy();
  rmSync(root, { recursive: true, force: true });
}
