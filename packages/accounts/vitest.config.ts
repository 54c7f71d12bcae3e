import { defineConfig } from 'vitest/config';

// Set-up and tear-down create and drop a database per test file (@pkgreg/db/testing). DROP DATABASE
// waits for an immediate checkpoint of the whole cluster, which takes seconds while every package's
// tests write in parallel under CI (one afterAll was seen past vitest's default 10 s).
export default defineConfig({
  test: { include: ['test/**/*.test.ts'], testTimeout: 30_000, hookTimeout: 30_000 },
});
