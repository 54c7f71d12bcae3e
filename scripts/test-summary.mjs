#!/usr/bin/env node
// Sums vitest's per-package "Tests  N passed | M failed" lines from a `pnpm test` log into one
// closing line, `N passed, M failed`, so CI shows the whole run's count in one place.
import { readFileSync } from 'node:fs';

const text = readFileSync(process.argv[2], 'utf8').replace(/\x1b\[[0-9;]*m/g, '');
const totals = { passed: 0, failed: 0, skipped: 0 };
let files = 0;
for (const line of text.split('\n')) {
  const m = /^\S*\s*Tests\s+(.*)\(\d+\)\s*$/.exec(line.replace(/^[^:]*:\s/, ''));
  if (!m) continue;
  files++;
  for (const part of m[1].split('|')) {
    const n = /(\d+)\s+(passed|failed|skipped|todo)/.exec(part.trim());
    if (n) totals[n[2] === 'todo' ? 'skipped' : n[2]] += Number(n[1]);
  }
}
if (!files) {
  console.log('0 passed, 0 failed');
  process.exit(0);
}
console.log(
  `${totals.passed} passed, ${totals.failed} failed${totals.skipped ? `, ${totals.skipped} skipped` : ''}`,
);
