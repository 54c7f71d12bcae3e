import {
  parseFrame,
  signConnectToken,
  TUNNEL_CONNECT_PATH,
  TunnelCallFrameSchema,
  type TunnelReceiver,
  type TunnelReplyFrame,
} from '@pkgreg/runtime';
import type { Logger } from '@pkgreg/server-kit';
import WebSocket from 'ws';

// The runtime's one connection to the edge (decisions.md: the user's machine accepts no inbound
// connection): it dials `{edge}/tunnel/connect` with a fresh connect token, answers the calls the edge
// forwards with the receiver (which checks every envelope), pings the edge and redials by itself, with
// exponential backoff and jitter, whenever the connection closes or a pong does not come back in time.

export interface DialOutOptions {
  /** The edge's base URL (http: or https:). */
  edgeUrl: string;
  sessionId: string;
  secret: string;
  receiver: TunnelReceiver;
  logger: Logger;
  heartbeat: { intervalMs: number; timeoutMs: number };
  reconnect: { minMs: number; maxMs: number };
  /** Another runtime connected with this session's credentials and the edge took its side (newest wins). */
  onReplaced(): void;
}

export interface DialOut {
  connected(): boolean;
  /** Stops redialing and closes the connection. */
  close(): Promise<void>;
}

/** Close code the edge sends to the connection a newer one of the same session replaced. */
const REPLACED = 4000;
const HANDSHAKE_TIMEOUT_MS = 10_000;
const MAX_FRAME_BYTES = 4 * 1024 * 1024;

/** `{edge}/tunnel/connect`, under the edge URL's own path when it has one (a proxy's prefix). */
export function connectUrl(edgeUrl: string): string {
  const url = new URL(TUNNEL_CONNECT_PATH.slice(1), `${edgeUrl.replace(/\/+$/, '')}/`);
  url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
  return url.toString();
}

export function dialOut(options: DialOutOptions): DialOut {
  const { logger, sessionId } = options;
  const url = connectUrl(options.edgeUrl);
  let socket: WebSocket | undefined;
  let open = false;
  let closing = false;
  let failures = 0;
  let redial: NodeJS.Timeout | undefined;

  /** Exponential backoff, each delay drawn from its upper half (jitter keeps many runtimes apart). */
  function backoffMs(): number {
    const ceiling = Math.min(options.reconnect.maxMs, options.reconnect.minMs * 2 ** Math.min(failures, 30));
    return Math.round(ceiling / 2 + (Math.random() * ceiling) / 2);
  }

  function scheduleRedial(): void {
    if (closing) return;
    const delay = backoffMs();
    failures += 1;
    logger.info({ delayMs: delay, attempt: failures }, 'redialing the edge');
    redial = setTimeout(() => void connect(), delay);
  }

  async function connect(): Promise<void> {
    redial = undefined;
    if (closing) return;
    let token: string;
    try {
      token = await signConnectToken({ sessionId, secret: options.secret });
    } catch (error) {
      logger.error({ err: error }, 'could not sign the connect token');
      scheduleRedial();
      return;
    }
    const ws = new WebSocket(url, {
      headers: { authorization: `Bearer ${token}` },
      handshakeTimeout: HANDSHAKE_TIMEOUT_MS,
      maxPayload: MAX_FRAME_BYTES,
      // The session's credential goes to the edge it was given, never where a redirect points.
      followRedirects: false,
    });
    socket = ws;
    let pongTimer: NodeJS.Timeout | undefined;
    let pinger: NodeJS.Timeout | undefined;
    let replaced = false;

    ws.on('unexpected-response', (_req, res) => {
      // 401: wrong session id or secret, or an expired session; the edge's log says no more than this.
      logger.error({ status: res.statusCode }, 'the edge refused the tunnel connection');
      res.resume();
      ws.terminate();
    });
    ws.on('open', () => {
      open = true;
      failures = 0;
      logger.info({ edge: options.edgeUrl, sessionId }, 'tunnel connected');
      pinger = setInterval(() => {
        if (pongTimer) return;
        pongTimer = setTimeout(() => {
          logger.warn({ timeoutMs: options.heartbeat.timeoutMs }, 'no pong from the edge; redialing');
          ws.terminate();
        }, options.heartbeat.timeoutMs);
        ws.ping();
      }, options.heartbeat.intervalMs);
    });
    ws.on('pong', () => {
      clearTimeout(pongTimer);
      pongTimer = undefined;
    });
    ws.on('message', (data, isBinary) => {
      if (isBinary) return;
      const frame = parseFrame(TunnelCallFrameSchema, data.toString());
      if (!frame) {
        logger.warn('ignored a malformed frame from the edge');
        return;
      }
      void options.receiver.receive(frame.envelope, frame.body).then(({ status, reply }) => {
        const answer: TunnelReplyFrame = { type: 'reply', id: frame.id, status, reply };
        if (ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify(answer));
      });
    });
    ws.on('error', (error) => logger.warn({ err: error.message }, 'tunnel connection error'));
    ws.on('close', (code) => {
      clearInterval(pinger);
      clearTimeout(pongTimer);
      const wasOpen = open;
      open = false;
      if (socket === ws) socket = undefined;
      if (wasOpen) logger.warn({ code }, 'tunnel disconnected');
      if (code === REPLACED) replaced = true;
      if (replaced && !closing) {
        logger.error('another runtime connected with this session; this one stops');
        options.onReplaced();
        return;
      }
      scheduleRedial();
    });
  }

  void connect();
  return {
    connected: () => open,
    async close() {
      closing = true;
      clearTimeout(redial);
      const ws = socket;
      if (!ws || ws.readyState === WebSocket.CLOSED) return;
      await new Promise<void>((resolve) => {
        ws.once('close', () => resolve());
        ws.close(1001, 'runtime shutting down');
        setTimeout(() => {
          ws.terminate();
          resolve();
        }, 2000).unref();
      });
    },
  };
}
