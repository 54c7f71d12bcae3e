import { defineConfig } from 'vitest/config';

// The tests run pnpm and turbo as child processes: seconds each on a busy machine.
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 120_000,
    fileParallelism: false,
  },
});
