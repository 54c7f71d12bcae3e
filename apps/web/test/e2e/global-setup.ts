import { fileURLToPath } from 'node:url';
import { build } from 'vite';

// The browser tests exercise what ships: build the UI first so dist/ is never stale.
export async function setup(): Promise<void> {
  await build({ root: fileURLToPath(new URL('../..', import.meta.url)), logLevel: 'warn' });
}
