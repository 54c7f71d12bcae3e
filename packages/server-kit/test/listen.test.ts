import { Agent, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { describe, expect, it } from 'vitest';
import { closeServer, listen } from '../src/index.js';

// STYLE.md §4: createApp never listens; index.ts listens and closes on shutdown.

function get(port: number, agent?: Agent): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    // No agent by default: Node's global agent keeps sockets alive and would reuse a closed one.
    const req = httpRequest({ host: '127.0.0.1', port, path: '/ping', agent: agent ?? false }, (res) => {
      let body = '';
      res.on('data', (c) => {
        body += c;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

function app() {
  return express().get('/ping', (_req, res) => {
    res.json({ pong: true });
  });
}

describe('listen / closeServer (STYLE.md §4)', () => {
  it('resolves once bound, serves, and closes', async () => {
    const server = await listen(app(), 0, '127.0.0.1');
    const { port } = server.address() as AddressInfo;
    expect(server.listening).toBe(true);
    expect(await get(port)).toEqual({ status: 200, body: '{"pong":true}' });
    await closeServer(server);
    expect(server.listening).toBe(false);
    await expect(get(port)).rejects.toThrow(/ECONNREFUSED/);
  });

  it('closes promptly even with an idle keep-alive connection open', async () => {
    const server = await listen(app(), 0, '127.0.0.1');
    const { port } = server.address() as AddressInfo;
    const agent = new Agent({ keepAlive: true });
    try {
      expect((await get(port, agent)).status).toBe(200);
      // keepAliveTimeout is 65 s, far past the test's timeout: without closeIdleConnections this
      // would not resolve in time.
      await closeServer(server);
      expect(server.listening).toBe(false);
    } finally {
      agent.destroy();
    }
  });

  it('rejects when the port is taken', async () => {
    const first = await listen(app(), 0, '127.0.0.1');
    const { port } = first.address() as AddressInfo;
    try {
      await expect(listen(app(), port, '127.0.0.1')).rejects.toThrow(/EADDRINUSE/);
    } finally {
      await closeServer(first);
    }
  });

  it('closeServer rejects for a server that is not listening', async () => {
    const server = await listen(app(), 0, '127.0.0.1');
    await closeServer(server);
    await expect(closeServer(server)).rejects.toThrow(/not running/i);
  });
});
