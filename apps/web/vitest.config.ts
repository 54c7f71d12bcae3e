import { defineConfig } from 'vitest/config';

// Unit tests of the pure modules (URL state, frontmatter, track-once); the browser tests have their own config.
export default defineConfig({ test: { include: ['test/unit/**/*.test.ts'] } });
