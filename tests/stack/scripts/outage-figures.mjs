#!/usr/bin/env node
// Prints the figures the outage tests wrote (tests/stack/results/outage-*.json, gitignored) as the
// Markdown table docs/benchmarks.md keeps: per service and kind of request, how many were accepted,
// refused and lost, and how soon the first request sent after the service was back succeeded.
import { readdir, readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';

const dir = fileURLToPath(new URL('../results/', import.meta.url));
const files = (await readdir(dir).catch(() => [])).filter((f) => /^outage-.*\.json$/.test(f)).sort();
if (files.length === 0) {
  console.error(
    'no results: run `pnpm --filter @pkgreg/stack-tests exec vitest run test/outage-redis.test.ts test/outage-postgres.test.ts` first',
  );
  process.exit(1);
}
console.log(
  '| service | form | round | outage (stop → answering) | request | accepted | refused (503) | lost | unanswered | recovery (back → first success) | slowest answer |',
);
console.log('|---|---|---|---|---|---|---|---|---|---|---|');
for (const file of files) {
  const result = JSON.parse(await readFile(`${dir}${file}`, 'utf8'));
  result.rounds.forEach((round, i) => {
    const lost = {
      track: round.lost.track,
      'memory.put': round.lost.memory,
      invoke: round.lost.tasks,
      'system.info': 0,
    };
    for (const [kind, f] of Object.entries(round.kinds)) {
      const recovery = f.recoveryMs === null ? '—' : `${f.recoveryMs} ms`;
      console.log(
        `| ${result.service} | ${result.form} | ${i + 1} | ${(round.stoppedToBackMs / 1000).toFixed(1)} s | ${kind} | ${f.accepted} | ${f.refused} | ${lost[kind]} | ${f.unanswered} | ${recovery} | ${f.maxMs} ms |`,
      );
    }
  });
}
