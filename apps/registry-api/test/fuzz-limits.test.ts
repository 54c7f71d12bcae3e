import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ErrorBodySchema } from '@pkgreg/contracts';
import { closeServer, listen, serverTimeouts } from '@pkgreg/server-kit';
import { fuzzAgent, openRawSocket, parseRawResponse, sendRaw } from '@pkgreg/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadEnv } from '../src/env.js';
import { insertPackages, packageRow, useTestRegistry } from './fixtures.js';

// Bodies over the limits and slow clients (issue 22, "Trust it"), over raw sockets against the registry
// served as index.ts serves it (server-kit listen with the env's timeouts): an oversized body is refused
// from its declared length with a 413 `{error}` and the connection closed, without the body being read;
// a client dribbling its headers or its body is cut off by the timeouts while other clients are served.

const ENV = { HTTP_HEADERS_TIMEOUT_MS: '1000', HTTP_REQUEST_TIMEOUT_MS: '2000' };
const t = useTestRegistry(ENV);
let server: Server;
let port: number;

beforeAll(async () => {
  await insertPackages(t.db, [packageRow({ scope: 'acme', name: 'pdf' })]);
  server = await listen(t.app, 0, '127.0.0.1', serverTimeouts(loadEnv(ENV)));
  port = (server.address() as AddressInfo).port;
});

afterAll(async () => {
  if (server) await closeServer(server);
});

const head = (method: string, path: string, headers: string[]) =>
  `${method} ${path} HTTP/1.1\r\nHost: registry.test\r\n${headers.map((h) => `${h}\r\n`).join('')}\r\n`;

function expectError(raw: string, status: number): void {
  const res = parseRawResponse(raw);
  expect(res?.status, raw.slice(0, 300)).toBe(status);
  expect(ErrorBodySchema.strict().parse(JSON.parse(res?.body ?? ''))).toBeTruthy();
}

describe('bodies over the limit', () => {
  for (const [label, method, path, limit] of [
    ['publish (JSON, 16 KiB)', 'POST', '/api/publish', 16 * 1024],
    ['track (before Express, 16 KiB)', 'POST', '/api/packages/@acme/pdf/track', 16 * 1024],
    ['a report (JSON, 16 KiB)', 'POST', '/api/packages/@acme/pdf/reports', 16 * 1024],
    ['the webhook (raw, 2 MiB)', 'POST', '/api/hooks/github', 2 * 1024 * 1024],
  ] as const) {
    it(`${label}: 413 {error} from the declared length, the rest never read, the connection closed`, async () => {
      const client = await openRawSocket(port);
      // Declares 100 MiB, sends 64 KiB of it and waits: the answer must not need the rest.
      client.socket.write(
        head(method, path, ['Content-Type: application/json', `Content-Length: ${100 * 1024 * 1024}`]),
      );
      client.socket.write('x'.repeat(64 * 1024));
      await client.closed;
      expect(limit).toBeLessThan(64 * 1024 * 1024);
      expectError(client.received(), 413);
      expect(client.received()).toMatch(/connection: close/i);
    });
  }

  it('a chunked body over 16 KiB is refused with 413 {error} as well', async () => {
    const client = await openRawSocket(port);
    const chunk = 'x'.repeat(8 * 1024);
    const chunked = `${chunk.length.toString(16)}\r\n${chunk}\r\n`;
    client.socket.write(
      `${head('POST', '/api/publish', ['Content-Type: application/json', 'Transfer-Encoding: chunked', 'Connection: close'])}${chunked.repeat(4)}0\r\n\r\n`,
    );
    await client.closed;
    expectError(client.received(), 413);
  });

  it('a body within the limit is still read and answered', async () => {
    const res = await sendRaw(port, {
      method: 'POST',
      path: '/api/packages/@acme/pdf/reports',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ reason: 'x'.repeat(100) }),
    });
    expect([201, 400]).toContain(res.status);
  });
});

describe('requests Node refuses before the app (counterexamples of test/fuzz.test.ts)', () => {
  it('a URL over 16 KiB: 431 {error} with a request id, not an empty answer', async () => {
    const res = await sendRaw(port, { method: 'GET', path: `/api/search?q=${'a'.repeat(20_000)}` });
    expect(res.status).toBe(431);
    expect(res.headers['x-request-id']).toBeTruthy();
    expect(ErrorBodySchema.strict().parse(JSON.parse(res.text))).toBeTruthy();
  });

  it('the same on a keep-alive connection that already served a request', async () => {
    const agent = fuzzAgent();
    try {
      expect((await sendRaw(port, { method: 'GET', path: '/api/packages' }, agent)).status).toBe(200);
      const res = await sendRaw(port, { method: 'GET', path: `/api/packages?${'a'.repeat(17_000)}` }, agent);
      expect(res.status).toBe(431);
      expect(ErrorBodySchema.strict().parse(JSON.parse(res.text))).toBeTruthy();
    } finally {
      agent.destroy();
    }
  });

  it('the same for HEAD: 431 without a body (one would be read as the next response)', async () => {
    const res = await sendRaw(port, { method: 'HEAD', path: `/${'%C3%A9'.repeat(3_000)}` });
    expect(res.status).toBe(431);
    expect(res.text).toBe('');
  });

  it('a malformed request line: 400 {error}', async () => {
    const client = await openRawSocket(port);
    client.socket.write('GET /api/packages HTTP/1.1 extra\r\nHost: registry.test\r\n\r\n');
    await client.closed;
    expectError(client.received(), 400);
  });
});

describe('slow clients', () => {
  // A header line every 200 ms for 20 s: far past HTTP_HEADERS_TIMEOUT_MS (1 s).
  const headerLines = Array.from({ length: 100 }, (_, i) => `X-Slow-${i}: a\r\n`);

  it('a client dribbling its headers is cut off (408 {error}) while another client is served', async () => {
    const slow = await openRawSocket(port);
    slow.socket.write('GET /api/packages HTTP/1.1\r\nHost: registry.test\r\n');
    const dribbling = slow.dribble(headerLines, 200);
    const normal = await sendRaw(port, { method: 'GET', path: '/api/packages' });
    expect(normal.status).toBe(200);
    expect(await dribbling).toBe('cut off');
    expectError(slow.received(), 408);
  });

  it('a client dribbling its body is cut off (408 {error}) while another client is served', async () => {
    const slow = await openRawSocket(port);
    slow.socket.write(
      head('POST', '/api/publish', ['Content-Type: application/json', 'Content-Length: 100']),
    );
    // A byte every 200 ms: the 100 bytes would take 20 s, past HTTP_REQUEST_TIMEOUT_MS (2 s).
    const dribbling = slow.dribble(
      Array.from({ length: 100 }, () => ' '),
      200,
    );
    const normal = await sendRaw(port, { method: 'GET', path: '/api/packages/@acme/pdf' });
    expect(normal.status).toBe(200);
    expect(await dribbling).toBe('cut off');
    expectError(slow.received(), 408);
  });

  it('a connection that never sends a request is closed with 408 {error}', async () => {
    const idle = await openRawSocket(port);
    await idle.closed;
    expectError(idle.received(), 408);
  });
});
