import { defineConfig } from 'vitest/config';

// The embedded store migrates a fresh in-memory database first (~10 s on this machine).
export default defineConfig({ test: { include: ['test/**/*.test.ts'], hookTimeout: 120_000 } });
