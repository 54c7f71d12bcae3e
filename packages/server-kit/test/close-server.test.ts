import { Agent, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { closeServer, listen } from '../src/index.js';

// SIGTERM drains (issue 22): closeServer lets the requests in flight finish, then closes even when their
// keep-alive sockets would stay open (keepAliveTimeout is 65 s, longer than any shutdown grace).

function post(port: number, agent: Agent): Promise<{ status: number; connection: string | undefined }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path: '/', method: 'POST', agent }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, connection: res.headers.connection }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('closeServer with keep-alive requests in flight', () => {
  it('answers the request in flight, then closes its socket instead of keeping it alive', async () => {
    let arrived!: () => void;
    const inHandler = new Promise<void>((resolve) => {
      arrived = resolve;
    });
    const server = await listen(
      (_req, res) => {
        arrived();
        setTimeout(() => res.end('done'), 200);
      },
      0,
      '127.0.0.1',
    );
    const { port } = server.address() as AddressInfo;
    const agent = new Agent({ keepAlive: true });
    try {
      const answer = post(port, agent);
      await inHandler;
      const closed = closeServer(server);
      expect(await answer).toMatchObject({ status: 200 });
      // Without closing the socket once idle, this waits for the 65 s keep-alive timeout.
      await closed;
      expect(server.listening).toBe(false);
    } finally {
      agent.destroy();
    }
  });

  it('answers a request that arrives on an open socket after close with Connection: close', async () => {
    const server = await listen(
      (_req, res) => {
        setTimeout(() => res.end('done'), 100);
      },
      0,
      '127.0.0.1',
    );
    const { port } = server.address() as AddressInfo;
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const first = post(port, agent);
      // Queued on the same socket: sent once the first answer is in, after close() began.
      const second = post(port, agent);
      await new Promise((r) => setTimeout(r, 20));
      const closed = closeServer(server);
      expect((await first).status).toBe(200);
      const next = await second.catch((error: NodeJS.ErrnoException) => error.code);
      // The socket is either closed before the second request (the client sees a reset, nothing ran) or
      // the request is answered and its socket closed after it.
      if (typeof next === 'string') expect(['ECONNRESET', 'ECONNREFUSED', 'EPIPE']).toContain(next);
      else expect(next).toEqual({ status: 200, connection: 'close' });
      await closed;
    } finally {
      agent.destroy();
    }
  });
});
