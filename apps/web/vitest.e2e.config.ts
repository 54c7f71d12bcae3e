import { defineConfig } from 'vitest/config';

// Browser tests: a real registry-api child process serving the freshly built UI, driven by headless Chromium.
// biome-ignore lint/style/noDefaultExport: vitest reads the config from the default export.
export default defineConfig({
  test: {
    include: ['test/e2e/**/*.test.ts'],
    globalSetup: ['test/e2e/global-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 90_000,
    // Two cores for everyone: one browser and one registry at a time.
    fileParallelism: false,
  },
});
