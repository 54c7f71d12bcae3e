import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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

// Issue 26: the tunnel's HTTP target never follows a redirect. A session's `target` is where the operator
// said the user's runtime listens; whatever answers there with a 3xx must not send the call, its envelope
// (valid for 60 s) and its caller on to a URL of its choosing.

const SECRET = 'r'.repeat(40);
const STATUSES = [301, 302, 303, 307, 308] as const;
let h: Harness;
let c: TestClient;
/** Answers every request with a redirect: `/<status>/<kind>` → that status to the trap (kind: absolute, relative, host). */
let redirector: Server;
/** Where the redirects point: any request reaching it is a leak. It answers as a receiver would. */
let trap: Server;
const trapped: IncomingMessage[] = [];

const listen = async (server: Server) => {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return (server.address() as AddressInfo).port;
};

beforeAll(async () => {
  trap = createServer((req, res) => {
    trapped.push(req);
    req.resume();
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ result: { leaked: true } }));
  });
  const trapPort = await listen(trap);
  redirector = createServer((req, res) => {
    const [, status, kind] = (req.url ?? '').split('/');
    const location =
      kind === 'relative'
        ? '/trap'
        : kind === 'host'
          ? `http://localhost:${trapPort}/tunnel/mcp`
          : `http://127.0.0.1:${trapPort}/tunnel/mcp`;
    // A relative Location lands on the redirector itself, which sends /trap on to the trap.
    if (req.url === '/trap') {
      res.writeHead(307, { location: `http://127.0.0.1:${trapPort}/tunnel/mcp` }).end();
      return;
    }
    req.resume();
    res.writeHead(Number(status), { location }).end();
  });
  const port = await listen(redirector);
  const sessions = STATUSES.flatMap((status) =>
    ['absolute', 'relative', 'host'].map((kind) => ({
      host: `r${status}-${kind}.tunnel.example`,
      sessionId: `r${status}-${kind}`,
      target: `http://127.0.0.1:${port}/${status}/${kind}`,
      secret: SECRET,
    })),
  );
  h = await createHarness({
    PKGREG_PUBLIC_MCP_TUNNEL_SESSIONS_JSON: JSON.stringify(sessions),
    EDGE_RATE_LIMIT_PER_MINUTE: '1000',
  });
  c = await clientWithToken(h);
  for (const s of sessions) await allowClient(h, { mode: 'local_tunnel', id: s.sessionId }, c);
});
afterAll(async () => {
  for (const server of [redirector, trap]) {
    await new Promise<void>((r) => {
      server.close(() => r());
      server.closeAllConnections();
    });
  }
  await h?.close();
});

describe('the HTTP target of a tunnel session never follows redirects', () => {
  it('every redirect status and Location form: tunnel_unavailable, and nothing reaches where it points', async () => {
    for (const status of STATUSES) {
      for (const kind of ['absolute', 'relative', 'host']) {
        const host = `r${status}-${kind}.tunnel.example`;
        const token = await tokenAt(h, c, host);
        for (const [method, params] of [
          [
            'tools/call',
            {
              name: 'pkgreg.memory.v1.put',
              arguments: { namespace: c.namespace, tier: 'stm', content: 'x' },
            },
          ],
          ['tasks/get', { taskId: '00000000-0000-4000-8000-000000000000' }],
        ] as const) {
          const res = await rpc(h, token, method, params, { headers: { Host: host } });
          expectRpcError(res, 503, 'tunnel_unavailable');
          expect(res.body.error.message).toBe(
            'local runtime answered with a redirect, which is not followed',
          );
        }
      }
    }
    expect(trapped.length).toBe(0);
  });
});
