import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { startRegistry } from '../src/index.js';

// Test files start servers side by side: a port freePort() found can be taken before the registry
// binds it, and then another server's /readyz must not pass for the registry's.

const STAND_IN = fileURLToPath(new URL('./fixtures/stand-in-registry.mjs', import.meta.url));
const options = { entry: STAND_IN, databaseUrl: 'postgres://unused', redisUrl: 'redis://unused' };

describe('startRegistry', () => {
  it('is ready only once its own process holds the port, not when another server answers there', async () => {
    const other = createServer((_req, res) => res.end('{"status":"ready"}'));
    other.listen(0, '127.0.0.1');
    await once(other, 'listening');
    const { port } = other.address() as AddressInfo;
    try {
      await expect(startRegistry({ ...options, port })).rejects.toThrow(/EADDRINUSE/);
      const started = await startRegistry(options);
      try {
        expect(started.port).not.toBe(port);
        expect((await fetch(`${started.url}/readyz`)).ok).toBe(true);
      } finally {
        expect(await started.stop()).toBe(0);
      }
    } finally {
      other.close();
    }
  });

  it('gives each registry process Redis keys and a queue of its own unless the caller names them', async () => {
    const started = await Promise.all([
      startRegistry(options),
      startRegistry(options),
      startRegistry({ ...options, env: { REDIS_KEY_PREFIX: 'shared:', QUEUE_PREFIX: 'shared-q' } }),
    ]);
    try {
      type Prefixes = { REDIS_KEY_PREFIX: string; QUEUE_PREFIX: string };
      const [first, second, named] = (await Promise.all(
        started.map(async (r) => (await fetch(`${r.url}/prefixes`)).json()),
      )) as [Prefixes, Prefixes, Prefixes];
      expect(first.REDIS_KEY_PREFIX).toMatch(/^pkgreg-test:registry:[0-9a-f]{8}:$/);
      expect(first.QUEUE_PREFIX).toMatch(/^pkgreg-test:registry-queue:[0-9a-f]{8}$/);
      expect(second.REDIS_KEY_PREFIX).not.toBe(first.REDIS_KEY_PREFIX);
      expect(second.QUEUE_PREFIX).not.toBe(first.QUEUE_PREFIX);
      expect(named).toEqual({ REDIS_KEY_PREFIX: 'shared:', QUEUE_PREFIX: 'shared-q' });
    } finally {
      await Promise.all(started.map((r) => r.stop()));
    }
  });
});
