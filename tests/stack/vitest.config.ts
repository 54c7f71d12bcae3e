import { defineConfig } from 'vitest/config';

// Each file starts several built apps as child processes (seconds each on a busy machine), so hooks and
// tests get room. Two files at a time: a stack spends much of its time waiting (process starts, a
// restart, a window), and each file has its own database, queue prefix and ports.
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 120_000,
    hookTimeout: 120_000,
    maxWorkers: 2,
  },
});
