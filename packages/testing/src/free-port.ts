import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

/**
 * Ports below the kernel's ephemeral range (Linux: `ip_local_port_range`, 32768-60999 by default), from
 * 10000: the kernel hands none of them to an outgoing connection or to `listen(0)`, so a port found free
 * here is taken before the test's own process listens on it only if another test picked the same one.
 * Undefined where the range cannot be read (not Linux): ports are then the kernel's, as `listen(0)` gives.
 */
const BELOW_EPHEMERAL = ((): { low: number; high: number } | undefined => {
  try {
    const [first] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/);
    const high = Number(first) - 1;
    return high >= 11_000 ? { low: 10_000, high } : undefined;
  } catch {
    return undefined;
  }
})();

/** Listens on `port` (0: one the kernel picks) on 127.0.0.1 and closes; the port, or undefined when taken. */
async function probe(port: number): Promise<number | undefined> {
  const server = createServer();
  server.unref();
  server.listen(port, '127.0.0.1');
  try {
    await once(server, 'listening');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EADDRINUSE') return undefined;
    throw error;
  }
  const address = server.address();
  server.close();
  await once(server, 'close');
  if (typeof address !== 'object' || !address) throw new Error('no port was bound');
  return address.port;
}

/**
 * A port on 127.0.0.1 that nothing listens on right now (bound, then closed): for a process the test
 * starts on it a moment later, or for a connection that must be refused. Picked at random below the
 * ephemeral range where there is one (BELOW_EPHEMERAL), else by the kernel.
 */
export async function freePort(): Promise<number> {
  if (BELOW_EPHEMERAL) {
    const { low, high } = BELOW_EPHEMERAL;
    for (let attempt = 0; attempt < 20; attempt++) {
      const port = await probe(low + Math.floor(Math.random() * (high - low + 1)));
      if (port !== undefined) return port;
    }
  }
  const port = await probe(0);
  if (port === undefined) throw new Error('no port was bound');
  return port;
}
