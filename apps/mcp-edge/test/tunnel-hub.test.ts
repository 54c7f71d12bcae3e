import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseFrame, signConnectToken, TUNNEL_CONNECT_PATH, TunnelCallFrameSchema } from '@pkgreg/runtime';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import {
  allowClient,
  clientWithToken,
  createHarness,
  expectRpcError,
  type Harness,
  rpc,
  type TestClient,
  tokenAt,
} from './helpers.js';

// The edge's end of the tunnel WebSocket (tunnel-hub.ts) against peers that misbehave on purpose: no or
// wrong credentials, a runtime that never answers, one that drops a call, one that stops answering pings,
// and two runtimes of one session. The well-behaved runtime (apps/local-runtime) has its end-to-end tests.

const SECRET = 'k'.repeat(43);
const TIMEOUT_MS = 2000;
const TASK = { taskId: '00000000-0000-4000-8000-000000000000' };
let h: Harness;
let c: TestClient;
/** c's token for `two.tunnel.example.com` (hub-2), the host the calls below go to. */
let token: string;
let server: Server;
let url: string;

beforeAll(async () => {
  h = await createHarness({
    PKGREG_PUBLIC_MCP_TUNNEL_SESSIONS_JSON: JSON.stringify([
      { handle: 'one', sessionId: 'hub-1', secret: SECRET },
      { handle: 'two', sessionId: 'hub-2', secret: SECRET },
      { handle: 'old', sessionId: 'hub-old', secret: SECRET, expiresAt: '2020-01-01T00:00:00Z' },
    ]),
    EDGE_TUNNEL_TIMEOUT_MS: String(TIMEOUT_MS),
    EDGE_TUNNEL_HEARTBEAT_MS: '100',
  });
  c = await clientWithToken(h);
  await allowClient(h, { mode: 'local_tunnel', id: 'hub-2' }, c);
  token = await tokenAt(h, c, 'two.tunnel.example.com');
  server = createServer(h.edge.handler);
  server.on('upgrade', h.edge.upgrade);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `ws://127.0.0.1:${(server.address() as AddressInfo).port}${TUNNEL_CONNECT_PATH}`;
});
afterAll(async () => {
  await h?.edge.closeTunnels();
  await new Promise<void>((r) => server.close(() => r()));
  await h?.close();
});

const at = (handle: 'two', method = 'tasks/get', params: Record<string, unknown> = TASK) =>
  rpc(h, token, method, params, { headers: { Host: `${handle}.tunnel.example.com` } });

/** Opens a connection; resolves once open, or with the HTTP status the edge refused it with. */
function connect(
  headers: Record<string, string>,
  options: { autoPong?: boolean; path?: string } = {},
): Promise<{ ws: WebSocket; refused?: number }> {
  const ws = new WebSocket(options.path ? url.replace(TUNNEL_CONNECT_PATH, options.path) : url, {
    headers,
    autoPong: options.autoPong ?? true,
  });
  return new Promise((resolve, reject) => {
    ws.once('open', () => resolve({ ws }));
    ws.once('unexpected-response', (_req, res) => {
      res.resume();
      resolve({ ws, refused: res.statusCode ?? 0 });
    });
    ws.once('error', reject);
  });
}

const bearer = async (sessionId: string, secret = SECRET) => ({
  authorization: `Bearer ${await signConnectToken({ sessionId, secret })}`,
});

const closed = (ws: WebSocket) =>
  new Promise<number>((resolve) => {
    if (ws.readyState === WebSocket.CLOSED) resolve(-1);
    else ws.once('close', (code) => resolve(code));
  });

describe('connecting (GET /tunnel/connect, WebSocket upgrade)', () => {
  it('refuses no token, a wrong secret, an unknown or expired session and a reused token (401); other paths 404', async () => {
    expect((await connect({})).refused).toBe(401);
    expect((await connect(await bearer('hub-1', 'x'.repeat(43)))).refused).toBe(401);
    expect((await connect(await bearer('hub-nope'))).refused).toBe(401);
    expect((await connect(await bearer('hub-old'))).refused).toBe(401);
    const headers = await bearer('hub-1');
    const first = await connect(headers);
    expect(first.refused).toBeUndefined();
    expect((await connect(headers)).refused).toBe(401);
    expect((await connect(await bearer('hub-1'), { path: '/elsewhere' })).refused).toBe(404);
    first.ws.close();
    await closed(first.ws);
  });
});

describe('calls over the connection', () => {
  it('with no runtime connected (and no target) a call is tunnel_unavailable 503 at once', async () => {
    const res = await at('two');
    // 503 and this message come only from the refusal up front; the tunnel timeout answers 504.
    expectRpcError(res, 503, 'tunnel_unavailable');
    expect(res.body.error.message).toBe('local runtime not connected');
  });

  it('a runtime that never answers: tunnel_unavailable 504 after the tunnel timeout, not a hang', async () => {
    const { ws } = await connect(await bearer('hub-2'));
    const started = Date.now();
    const res = await at('two');
    const elapsed = Date.now() - started;
    // 504 comes only from the tunnel timeout, and not before its time; a hang would never answer.
    expectRpcError(res, 504, 'tunnel_unavailable');
    expect(elapsed).toBeGreaterThanOrEqual(TIMEOUT_MS - 50);
    ws.close();
    await closed(ws);
  });

  it('a runtime that drops the connection mid-call: the caller gets tunnel_unavailable at once', async () => {
    const { ws } = await connect(await bearer('hub-2'));
    ws.once('message', () => ws.terminate());
    const res = await at('two');
    // 503 and this message come only from the dropped connection; the tunnel timeout answers 504.
    expectRpcError(res, 503, 'tunnel_unavailable');
    expect(res.body.error.message).toBe('local runtime disconnected during the call');
  });

  it('one connection per session, the newest wins: the older is closed (4000) and calls reach the newest', async () => {
    const older = await connect(await bearer('hub-2'));
    const olderClosed = closed(older.ws);
    const newer = await connect(await bearer('hub-2'));
    expect(await olderClosed).toBe(4000);
    newer.ws.on('message', (data) => {
      const frame = parseFrame(TunnelCallFrameSchema, data.toString());
      if (!frame) return;
      const result = { taskId: TASK.taskId, answeredBy: 'newer' };
      newer.ws.send(JSON.stringify({ type: 'reply', id: frame.id, status: 200, reply: { result } }));
    });
    const res = await at('two');
    expect(res.status).toBe(200);
    expect(res.body.result.answeredBy).toBe('newer');
    newer.ws.close();
    await closed(newer.ws);
  });

  it('a connection that stops answering pings is closed by the heartbeat', async () => {
    const { ws } = await connect(await bearer('hub-2'), { autoPong: false });
    // Nothing else closes it: without the heartbeat this would wait past the test's timeout.
    expect(await closed(ws)).toBe(1006);
    const res = await at('two');
    expectRpcError(res, 503, 'tunnel_unavailable');
  });
});
