import { defineConfig } from 'vitest/config';

// The tests run pnpm and turbo as child processes: seconds each when the apps are built, minutes when
// `pnpm registry` must first rebuild them on a busy machine (run alone, outside `pnpm test`).
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 300_000,
    fileParallelism: false,
  },
});
