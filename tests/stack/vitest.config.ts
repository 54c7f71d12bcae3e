import { defineConfig } from 'vitest/config';

// Each file starts several built apps as child processes (seconds each on a busy machine), so hooks and
// tests get room; files run one at a time because each stack alone keeps both cores busy.
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 120_000,
    hookTimeout: 60_000,
    fileParallelism: false,
  },
});
