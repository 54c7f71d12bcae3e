import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { freePort } from '../src/index.js';

// freePort picks below the kernel's ephemeral range, so no outgoing connection or listen(0) of another
// process is handed the port between the pick and the test's own listen.

const held: Server[] = [];
afterAll(() => Promise.all(held.map((s) => new Promise((resolve) => s.close(resolve)))));

async function listenOn(port: number): Promise<Server> {
  const server = createServer();
  server.listen(port, '127.0.0.1');
  await once(server, 'listening');
  held.push(server);
  return server;
}

const [rangeLow] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/);
const belowEphemeral = Number(rangeLow) - 10_000;

describe('freePort', () => {
  it('picks again when the port it drew is taken', async () => {
    const taken = await freePort();
    await listenOn(taken);
    // The first draw lands on the taken port, the next ones where they fall.
    const random = vi.spyOn(Math, 'random').mockReturnValueOnce((taken - 10_000 + 0.5) / belowEphemeral);
    try {
      const port = await freePort();
      expect(random.mock.calls.length).toBeGreaterThanOrEqual(2);
      expect(port).not.toBe(taken);
      await listenOn(port);
    } finally {
      random.mockRestore();
    }
  });

  it('gives ports below the ephemeral range, each free, never one something listens on', async () => {
    const ports = new Set<number>();
    for (let i = 0; i < 200; i++) {
      const port = await freePort();
      expect(port).toBeGreaterThanOrEqual(10_000);
      expect(port).toBeLessThan(Number(rangeLow));
      expect(ports.has(port)).toBe(false);
      // Held open: a later pick of the same port finds it taken and must pick again.
      await listenOn(port);
      ports.add(port);
    }
  });
});
