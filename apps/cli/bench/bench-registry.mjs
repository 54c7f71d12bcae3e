// What both CLI benches share: the built registry-api started on a database of their own, and the
// wall time of one command as a fresh process.
import { execFileSync, spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '@pkgreg/testing';

const here = path.dirname(fileURLToPath(import.meta.url));
const registryEntry = path.resolve(here, '../../registry-api/dist/index.js');
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Starts the built registry-api on `databaseUrl` in production mode; resolves once it is ready. */
export async function startRegistry(databaseUrl) {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const child = spawn(process.execPath, [registryEntry], {
    env: {
      ...process.env,
      DATABASE_URL: databaseUrl,
      REGISTRY_PORT: String(port),
      LOG_LEVEL: 'warn',
      NODE_ENV: 'production',
      // Production requires publishing's settings (docs/publishing.md); nothing is published here.
      REGISTRY_PUBLIC_URL: base,
      WEBHOOK_SECRET_KEY: 'bench-only-webhook-key-never-used-for-a-real-publish',
      // Production signs sessions with it (docs/accounts.md); nobody signs in here.
      AUTH_SECRET: 'bench-only-auth-secret-never-used-for-a-real-session',
    },
    stdio: 'ignore',
  });
  for (let i = 0; ; i += 1) {
    try {
      if ((await fetch(`${base}/readyz`)).ok) break;
    } catch {}
    if (child.exitCode !== null || i > 200) throw new Error('registry-api did not come up');
    await sleep(100);
  }
  return { base, stop: () => child.kill('SIGTERM') };
}

/** Wall time of `command` run to completion, in ms. */
export function timeMs(command, args, options) {
  const started = performance.now();
  execFileSync(command, args, { stdio: 'ignore', ...options });
  return performance.now() - started;
}
