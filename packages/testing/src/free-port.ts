import { once } from 'node:events';
import { createServer } from 'node:net';

/**
 * A port on 127.0.0.1 that nothing listens on right now (bound, then closed): for a process the test
 * starts on it a moment later, or for a connection that must be refused.
 */
export async function freePort(): Promise<number> {
  const server = createServer();
  server.unref();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  server.close();
  await once(server, 'close');
  if (typeof address !== 'object' || !address) throw new Error('no port was bound');
  return address.port;
}
