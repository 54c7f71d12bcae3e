import { Agent, request as httpRequest } from 'node:http';
import { type AddressInfo, connect } from 'node:net';
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
    let arrived!: () => void;
    const inHandler = new Promise<void>((resolve) => {
      arrived = resolve;
    });
    const server = await listen(
      (_req, res) => {
        arrived();
        setTimeout(() => res.end('done'), 100);
      },
      0,
      '127.0.0.1',
    );
    const { port } = server.address() as AddressInfo;
    // A raw socket, so the second request is sent exactly when the test says: after close() began, on the
    // socket the first request is still open on (pipelined; the server answers in order).
    const socket = connect(port, '127.0.0.1');
    let received = '';
    socket.on('data', (chunk: Buffer) => {
      received += chunk.toString('latin1');
    });
    const ended = new Promise<void>((resolve) => socket.on('close', () => resolve()));
    const request = 'POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n';
    try {
      socket.write(request);
      await inHandler;
      const closed = closeServer(server);
      socket.write(request);
      await closed;
      await ended;
      const answers = received.split('HTTP/1.1 ').slice(1);
      expect(answers).toHaveLength(2);
      expect(answers[0]).toMatch(/^200 /);
      expect(answers[1]).toMatch(/^200 /);
      expect(answers[1]?.toLowerCase()).toContain('connection: close');
    } finally {
      socket.destroy();
    }
  });
});
