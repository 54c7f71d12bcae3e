import { defineConfig } from 'vitest/config';

// A database per test file (@pkgreg/db/testing): DROP DATABASE waits for a checkpoint, which takes
// seconds while every package's tests write at once under CI.
export default defineConfig({ test: { include: ['test/**/*.test.ts'], hookTimeout: 30_000 } });
