import { defineConfig } from 'vite';
import { DEV_CSP, PRODUCTION_CSP } from './csp.js';
import { loadWebEnv } from './env.js';

const env = loadWebEnv();
// The API, and the discovery indexes below the pages' own addresses (`/orgs/<slug>/.well-known/…`,
// `/@scope/.well-known/…`), which the registry serves where the web UI is one origin with it.
const proxy = {
  '/api': { target: env.WEB_API_PROXY, changeOrigin: false },
  '^(/[^/]+){0,2}/\\.well-known/agent-skills/': { target: env.WEB_API_PROXY, changeOrigin: false },
};

export default defineConfig({
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  server: {
    port: 5173,
    strictPort: true,
    host: '127.0.0.1',
    headers: { 'Content-Security-Policy': DEV_CSP },
    proxy,
  },
  preview: {
    port: 5173,
    strictPort: true,
    host: '127.0.0.1',
    headers: { 'Content-Security-Policy': PRODUCTION_CSP },
    proxy,
  },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'es2022',
    // No inline module preload polyfill: the CSP forbids inline scripts and every target browser has it.
    modulePreload: { polyfill: false },
    assetsInlineLimit: 0,
  },
});
