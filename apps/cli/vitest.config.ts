import { defineConfig } from 'vitest/config';

// Each file starts its own registry-api process; one file at a time keeps the shared 2-core machine usable.
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 180_000,
    hookTimeout: 180_000,
    fileParallelism: false,
  },
});
