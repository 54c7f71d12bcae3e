import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Type-checking the manifests against the models' types compiles them with TypeScript: seconds.
    testTimeout: 60_000,
  },
});
