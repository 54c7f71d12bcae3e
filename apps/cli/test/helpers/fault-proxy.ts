import { once } from 'node:events';
import { createServer, type IncomingMessage, request, type Server } from 'node:http';

export interface CannedResponse {
  status: number;
  headers?: Record<string, string>;
  body: string | Buffer;
  /** Sends the body in 64 KiB pieces this many milliseconds apart (a slow network). */
  pieceDelayMs?: number;
}

/** Decides per request: forward to the registry, answer with a canned response, or never answer. */
export type FaultPlan = (
  req: IncomingMessage,
  index: number,
) => CannedResponse | 'forward' | 'hang' | ((body: string) => string);

export interface FaultProxy {
  url: string;
  /** Method, path and arrival time of every request seen. */
  requests: { method: string; path: string; at: number }[];
  close(): Promise<void>;
}

/**
 * A local HTTP server in front of the real registry that injects what the real one never does on
 * demand (429, 5xx, a malformed body); everything else is forwarded unchanged.
 */
export async function startFaultProxy(target: string, plan: FaultPlan): Promise<FaultProxy> {
  const requests: FaultProxy['requests'] = [];
  const server: Server = createServer((req, res) => {
    const index = requests.length;
    requests.push({ method: req.method ?? 'GET', path: req.url ?? '/', at: Date.now() });
    const decision = plan(req, index);
    if (decision === 'hang') return;
    if (typeof decision === 'object') {
      const body = Buffer.from(decision.body);
      res.writeHead(decision.status, {
        'content-type': 'application/json',
        'content-length': String(body.length),
        ...decision.headers,
      });
      if (!decision.pieceDelayMs) {
        res.end(body);
        return;
      }
      const delay = decision.pieceDelayMs;
      const send = (offset: number) => {
        if (offset >= body.length || res.destroyed) {
          res.end();
          return;
        }
        res.write(body.subarray(offset, offset + 65_536));
        setTimeout(() => send(offset + 65_536), delay);
      };
      send(0);
      return;
    }
    const upstream = request(
      `${target}${req.url}`,
      { method: req.method, headers: { ...req.headers, host: new URL(target).host } },
      (answer) => {
        if (decision === 'forward') {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
          return;
        }
        let text = '';
        answer.setEncoding('utf8');
        answer.on('data', (chunk) => {
          text += chunk;
        });
        answer.on('end', () => {
          const body = decision(text);
          const headers = { ...answer.headers, 'content-length': String(Buffer.byteLength(body)) };
          delete headers['transfer-encoding'];
          delete headers.etag;
          res.writeHead(answer.statusCode ?? 502, headers);
          res.end(body);
        });
      },
    );
    req.pipe(upstream);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    async close() {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}
