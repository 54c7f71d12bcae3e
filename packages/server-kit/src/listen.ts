import { randomUUID } from 'node:crypto';
import { createServer, type RequestListener, type Server, STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';

/**
 * How long a client may take to send a request. Slow clients (slowloris: headers or a body dribbled a
 * byte at a time) would otherwise hold a socket and its memory for Node's defaults of minutes.
 */
export interface ServerTimeouts {
  /** The request line and every header must arrive within this, or the socket is closed (408). */
  headersTimeoutMs: number;
  /** The whole request, body included, must arrive within this (the response may take longer). */
  requestTimeoutMs: number;
  /** An idle keep-alive socket is closed after this (longer than a load balancer's idle timeout). */
  keepAliveTimeoutMs: number;
}

export const DEFAULT_SERVER_TIMEOUTS: ServerTimeouts = {
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  keepAliveTimeoutMs: 65_000,
};

/** The timeouts of an app's env (httpServerEnvShape in env.ts). */
export function serverTimeouts(env: {
  HTTP_HEADERS_TIMEOUT_MS: number;
  HTTP_REQUEST_TIMEOUT_MS: number;
  HTTP_KEEP_ALIVE_TIMEOUT_MS: number;
}): ServerTimeouts {
  return {
    headersTimeoutMs: env.HTTP_HEADERS_TIMEOUT_MS,
    requestTimeoutMs: env.HTTP_REQUEST_TIMEOUT_MS,
    keepAliveTimeoutMs: env.HTTP_KEEP_ALIVE_TIMEOUT_MS,
  };
}

/** The body of a refusal Node's HTTP parser makes before any handler runs, in the app's error shape. */
export type ClientErrorBody = (status: number, message: string, requestId: string) => string;

const CLIENT_ERRORS: Record<string, [number, string]> = {
  HPE_HEADER_OVERFLOW: [431, 'Request header fields too large'],
  HPE_URI_TOO_LONG: [414, 'URI too long'],
  ERR_HTTP_REQUEST_TIMEOUT: [408, 'Request timeout'],
};

/** How long a refused client may go on sending before its connection is closed. */
const CLIENT_ERROR_LINGER_MS = 2_000;

/** `{error}`: the registry's error body (and the OAuth endpoints'). */
export const errorMessageBody: ClientErrorBody = (_status, message) => JSON.stringify({ error: message });

/**
 * Answers what Node's parser refuses (a malformed request line or header, headers over the size limit,
 * a request that took too long) with the app's error shape instead of Node's empty response, then
 * closes the connection: after a parse error nothing more on it can be read.
 */
function onClientError(body: ClientErrorBody) {
  const answered = new WeakSet<Duplex>();
  return (error: Error & { code?: string }, socket: Duplex) => {
    // The rest of a refused request still reaches the parser, which refuses each piece again: it is read
    // and dropped until the client closes (closing at once would reset the connection while the client
    // still sends, and the client would lose the answer).
    if (answered.has(socket)) return;
    // As Node's own answer: never in the middle of a response already started on this socket.
    const inflight = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
    if (!socket.writable || inflight?.headersSent) {
      socket.destroy();
      return;
    }
    const [status, message] = CLIENT_ERRORS[error.code ?? ''] ?? [400, 'Bad request'];
    // A HEAD request's answer has no body (the client would read one as the next response). The packet
    // the parser refused shows the method when the request started in it, as it does but for a request
    // line split across packets.
    const packet = (error as { rawPacket?: Buffer }).rawPacket;
    const requestId = randomUUID();
    const text = packet?.toString('latin1', 0, 5) === 'HEAD ' ? '' : body(status, message, requestId);
    answered.add(socket);
    setTimeout(() => socket.destroy(), CLIENT_ERROR_LINGER_MS).unref();
    socket.end(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json\r\nX-Request-Id: ${requestId}\r\nContent-Length: ${Buffer.byteLength(text)}\r\nConnection: close\r\n\r\n${text}`,
    );
  };
}

/**
 * Serves `handler` (an Express app or any node request listener) and resolves once bound;
 * `closeServer()` stops accepting and drains keep-alive sockets.
 */
export function listen(
  handler: RequestListener,
  port: number,
  host: string,
  timeouts: ServerTimeouts = DEFAULT_SERVER_TIMEOUTS,
  clientErrorBody: ClientErrorBody = errorMessageBody,
): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server = createServer(
      {
        headersTimeout: Math.min(timeouts.headersTimeoutMs, timeouts.requestTimeoutMs),
        requestTimeout: timeouts.requestTimeoutMs,
        keepAliveTimeout: timeouts.keepAliveTimeoutMs,
        // Node checks both timeouts only this often (30 s by default), which would let a slow client
        // stay that much longer than its bound.
        connectionsCheckingInterval: Math.max(50, Math.min(1_000, timeouts.headersTimeoutMs / 4)),
      },
      handler,
    );
    server.on('clientError', onClientError(clientErrorBody));
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve(server);
    });
  });
}

export function closeServer(server: Server): Promise<void> {
  return new Promise((resolve, reject) => {
    // A keep-alive socket busy at close() stays open after its response, and a client may keep sending on
    // it: the server would not close before keepAliveTimeout, past the shutdown grace. So requests that
    // still arrive are answered with `Connection: close`, and sockets are closed as soon as they are idle.
    server.prependListener('request', (_req, res) => {
      if (!res.headersSent) res.setHeader('connection', 'close');
    });
    const sweep = setInterval(() => server.closeIdleConnections(), 50);
    server.close((error) => {
      clearInterval(sweep);
      if (error) reject(error);
      else resolve();
    });
    server.closeIdleConnections();
  });
}
