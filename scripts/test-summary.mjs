#!/usr/bin/env node
// Sums vitest's per-package "Tests  N passed | M failed" lines from a `pnpm test` log into one
// closing line, `N passed, M failed`, and repeats the names of failed tests after it, so the tail
// of a CI log alone says what failed.
import { readFileSync } from 'node:fs';

const text = readFileSync(process.argv[2], 'utf8').replace(/\x1b\[[0-9;]*m/g, '');
const totals = { passed: 0, failed: 0, skipped: 0 };
const failedTests = new Set();
let files = 0;
for (const line of text.split('\n')) {
  const body = line.replace(/^[^:]*:\s/, '');
  // vitest marks a failed file "FAIL" and a failed test "×"; the prefix is turbo's task name.
  const failure = /^(\S*?)\s*(?:FAIL|×)\s+(.+?)(?:\s+\d+ms)?\s*$/.exec(body);
  if (failure) failedTests.add(`${failure[1]} ${failure[2]}`.trim());
  const m = /^\S*\s*Tests\s+(.*)\(\d+\)\s*$/.exec(body);
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
for (const name of failedTests) console.log(`failed: ${name}`);
