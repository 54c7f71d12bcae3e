import { defineConfig } from 'vitest/config';

// End-to-end tests spawn the built edge and local runtimes as processes (PGlite's first start migrates a
// fresh store, ~10 s on this machine): one file at a time, generous timeouts.
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 120_000,
    hookTimeout: 180_000,
    fileParallelism: false,
  },
});
