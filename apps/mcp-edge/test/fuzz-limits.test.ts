import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ERROR_WIRE_FORMS } from '@pkgreg/contracts';
import { closeServer, listen, serverTimeouts } from '@pkgreg/server-kit';
import { openRawSocket, parseRawResponse, sendRaw } from '@pkgreg/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rpcClientErrorBody } from '../src/mcp/transport.js';
import {
  callTool,
  clientWithToken,
  expectRpcError as expectRpcErrorOf,
  HOST,
  rpc,
  type TestClient,
  useHarness,
} from './helpers.js';

// Bodies over the limit and slow clients at the edge (issue 22, "Trust it"), over raw sockets against
// the edge served as index.ts serves it: a body declared over 64 KiB is refused with a JSON-RPC 413
// before it is read and the connection closed; a client dribbling its headers or body is cut off by the
// env's timeouts (a JSON-RPC invalid_request, 408) while other clients are served.

const h = useHarness({ HTTP_HEADERS_TIMEOUT_MS: '1000', HTTP_REQUEST_TIMEOUT_MS: '2000' });
let server: Server;
let port: number;
let client: TestClient;

beforeAll(async () => {
  client = await clientWithToken(h);
  server = await listen(h.edge.handler, 0, '127.0.0.1', serverTimeouts(h.env), rpcClientErrorBody);
  port = (server.address() as AddressInfo).port;
});

afterAll(async () => {
  if (server) await closeServer(server);
});

const head = (headers: string[]) =>
  `POST /mcp HTTP/1.1\r\nHost: ${HOST}\r\nContent-Type: application/json\r\nAccept: application/json\r\n${headers.map((x) => `${x}\r\n`).join('')}\r\n`;

function expectRpcError(raw: string, status: number): void {
  const res = parseRawResponse(raw);
  expect(res?.status, raw.slice(0, 300)).toBe(status);
  const body = JSON.parse(res?.body ?? '') as {
    jsonrpc: string;
    error: { code: number; data: { reason: string; requestId: string } };
  };
  expect(body.jsonrpc).toBe('2.0');
  expect(body.error.data.reason).toBe('invalid_request');
  expect(body.error.data.requestId).toBe(/x-request-id: ([^\r]+)/i.exec(res?.headers ?? '')?.[1]);
  expect(body.error.code).toBe(ERROR_WIRE_FORMS.invalid_request.code);
}

const ping = () =>
  sendRaw(port, {
    method: 'POST',
    path: '/mcp',
    headers: {
      host: HOST,
      'content-type': 'application/json',
      accept: 'application/json',
      authorization: `Bearer ${client.token}`,
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
  });

describe('bodies over the limit', () => {
  it('a body declared over 64 KiB: 413 invalid_request before it is read, the connection closed', async () => {
    const slow = await openRawSocket(port);
    slow.socket.write(
      head([`Authorization: Bearer ${client.token}`, `Content-Length: ${100 * 1024 * 1024}`]),
    );
    slow.socket.write('x'.repeat(64 * 1024));
    await slow.closed;
    expectRpcError(slow.received(), 413);
    expect(slow.received()).toMatch(/connection: close/i);
  });

  it('a chunked body over 64 KiB: 413 invalid_request', async () => {
    const slow = await openRawSocket(port);
    const chunk = 'x'.repeat(16 * 1024);
    slow.socket.write(
      `${head([`Authorization: Bearer ${client.token}`, 'Transfer-Encoding: chunked'])}${`${chunk.length.toString(16)}\r\n${chunk}\r\n`.repeat(6)}0\r\n\r\n`,
    );
    await slow.closed;
    expectRpcError(slow.received(), 413);
  });
});

describe('counterexamples of test/fuzz.test.ts', () => {
  it('an unknown path: 404 {error: not_found} as JSON, not an HTML page echoing the path', async () => {
    const res = await sendRaw(port, { method: 'GET', path: '/%3Cscript%3E', headers: { host: HOST } });
    expect(res.status).toBe(404);
    expect(JSON.parse(res.text)).toEqual({ error: 'not_found', error_description: 'no such endpoint' });
  });

  it('a lone surrogate in a registry search or a resource URI: request_schema_invalid, not internal_error', async () => {
    // It cannot be percent-encoded into the registry request: that threw, and the edge answered 500.
    const search = await callTool(h, client.token, 'pkgreg.registry.v1.search', { q: '\ud800' });
    expectRpcErrorOf(search, 200, 'request_schema_invalid');
    const read = await rpc(h, client.token, 'resources/read', { uri: 'skill://@acme/pdf/\udc00.md' });
    expectRpcErrorOf(read, 200, 'request_schema_invalid');
  });

  it('a request line over 16 KiB: 431 invalid_request whose data.requestId is the X-Request-Id', async () => {
    const slow = await openRawSocket(port);
    slow.socket.write(`GET /${'a'.repeat(17_000)} HTTP/1.1\r\nHost: ${HOST}\r\n\r\n`);
    await slow.closed;
    expectRpcError(slow.received(), 431);
  });
});

describe('slow clients', () => {
  it('a client dribbling its headers is cut off (408, invalid_request) while another client is served', async () => {
    const slow = await openRawSocket(port);
    slow.socket.write(`POST /mcp HTTP/1.1\r\nHost: ${HOST}\r\n`);
    const dribbling = slow.dribble(
      Array.from({ length: 100 }, (_, i) => `X-Slow-${i}: a\r\n`),
      200,
    );
    expect((await ping()).status).toBe(200);
    expect(await dribbling).toBe('cut off');
    expectRpcError(slow.received(), 408);
  });

  it('a client dribbling its body is cut off (408, invalid_request) while another client is served', async () => {
    const slow = await openRawSocket(port);
    slow.socket.write(head([`Authorization: Bearer ${client.token}`, 'Content-Length: 100']));
    const dribbling = slow.dribble(
      Array.from({ length: 100 }, () => ' '),
      200,
    );
    expect((await ping()).status).toBe(200);
    expect(await dribbling).toBe('cut off');
    expectRpcError(slow.received(), 408);
  });
});
