import { defineConfig } from 'vite';
import { DEV_CSP, PRODUCTION_CSP } from './csp.js';
import { loadWebEnv } from './env.js';

const env = loadWebEnv();

export default defineConfig({
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  server: {
    port: 5173,
    strictPort: true,
    host: '127.0.0.1',
    headers: { 'Content-Security-Policy': DEV_CSP },
    proxy: { '/api': { target: env.WEB_API_PROXY, changeOrigin: false } },
  },
  preview: {
    port: 5173,
    strictPort: true,
    host: '127.0.0.1',
    headers: { 'Content-Security-Policy': PRODUCTION_CSP },
    proxy: { '/api': { target: env.WEB_API_PROXY, changeOrigin: false } },
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
