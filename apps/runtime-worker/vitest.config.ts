import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // The resilience tests start worker and registry processes: keep the 2-core box from thrashing.
    fileParallelism: false,
  },
});
