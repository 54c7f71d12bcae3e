import { defineConfig } from 'vitest/config';

// CLI tests spawn node per command and the SDK test runs a real server: allow them time on a busy box.
export default defineConfig({
  test: { include: ['test/**/*.test.ts'], testTimeout: 30_000, hookTimeout: 30_000 },
});
