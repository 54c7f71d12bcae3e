import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { RejectError } from '@pkgreg/contracts';
import {
  type ForwardReply,
  parseFrame,
  TUNNEL_CONNECT_PATH,
  type TunnelCallFrame,
  TunnelReplyFrameSchema,
  verifyConnectToken,
} from '@pkgreg/runtime';
import type { Logger } from '@pkgreg/server-kit';
import type { Redis } from 'ioredis';
import { WebSocket, WebSocketServer } from 'ws';
import type { TunnelSession } from '../env.js';

// The edge's end of the tunnels local runtimes dial out (the user's machine accepts no inbound
// connection): one authenticated WebSocket per session on TUNNEL_CONNECT_PATH, the newest winning, kept
// alive by ping/pong. The tunnel runtime (tunnel-runtime.ts) sends admitted calls over it and matches
// replies by id. A call never outlives its connection: a close fails every call in flight at once with
// `tunnel_unavailable`, and a connection that misses a heartbeat is closed.

export interface TunnelHubOptions {
  sessions: readonly TunnelSession[];
  /** Consumes each connect token's jti once (SET NX EX). */
  redis: Redis;
  logger: Logger;
  /** Ping every this many ms; a connection with no pong by the next ping is dropped. */
  heartbeatMs: number;
}

export interface TunnelHub {
  /** Takes an HTTP upgrade on TUNNEL_CONNECT_PATH; false for any other path (the caller refuses it). */
  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): boolean;
  /** Whether the session's local runtime is connected now. */
  connected(sessionId: string): boolean;
  /** Sends one call over the session's connection; `tunnel_unavailable` when it closes or is too slow. */
  call(
    sessionId: string,
    frame: Omit<TunnelCallFrame, 'type' | 'id'>,
    timeoutMs: number,
  ): Promise<{ status: number; reply: ForwardReply }>;
  /** Closes every connection (shutdown). */
  close(): Promise<void>;
}

interface Pending {
  resolve(value: { status: number; reply: ForwardReply }): void;
  reject(error: RejectError): void;
  timer: NodeJS.Timeout;
}

interface Connection {
  sessionId: string;
  socket: WebSocket;
  pending: Map<string, Pending>;
  alive: boolean;
}

/** Replies bigger than this close the connection (a memory search answer is well below it). */
const MAX_FRAME_BYTES = 4 * 1024 * 1024;

const unavailable = (message: string, httpStatus = 503) =>
  new RejectError('tunnel_unavailable', message, { httpStatus });

/** Each session's secret while it is active, looked up when a runtime connects: an expired one cannot. */
function sessionSecrets(list: readonly TunnelSession[]): (sessionId: string) => string | undefined {
  const sessions = new Map(list.map((s) => [s.sessionId, s]));
  return (sessionId) => {
    const session = sessions.get(sessionId);
    if (!session) return undefined;
    if (session.expiresAt && Date.parse(session.expiresAt) <= Date.now()) return undefined;
    return session.secret;
  };
}

function refuse(socket: Duplex, status: 401 | 404): void {
  const text = status === 401 ? 'Unauthorized' : 'Not Found';
  socket.end(`HTTP/1.1 ${status} ${text}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
}

/** The session a connect request's bearer token names, once its jti is consumed; undefined if refused. */
async function authenticate(
  req: IncomingMessage,
  secretOf: (sessionId: string) => string | undefined,
  redis: Redis,
): Promise<string | undefined> {
  const header = req.headers.authorization ?? '';
  const token = header.startsWith('Bearer ') ? header.slice(7).trim() : '';
  if (!token) return undefined;
  const verified = await verifyConnectToken(token, secretOf);
  if (!verified) return undefined;
  const ttl = Math.max(1, verified.exp - Math.floor(Date.now() / 1000) + 1);
  const key = `tunnel:connect:${verified.sessionId}:${verified.jti}`;
  const fresh = await redis.set(key, '1', 'EX', ttl, 'NX');
  return fresh === 'OK' ? verified.sessionId : undefined;
}

function failPending(conn: Connection, error: RejectError): void {
  for (const [id, p] of conn.pending) {
    clearTimeout(p.timer);
    conn.pending.delete(id);
    p.reject(error);
  }
}

/** Makes `socket` the session's connection: replies settle its calls, a close fails those in flight. */
function attach(
  connections: Map<string, Connection>,
  logger: Logger,
  sessionId: string,
  socket: WebSocket,
): void {
  const conn: Connection = { sessionId, socket, pending: new Map(), alive: true };
  const previous = connections.get(sessionId);
  connections.set(sessionId, conn);
  if (previous) {
    // One connection per session, the newest wins: a runtime that reconnected before the edge saw its
    // old connection die must not be refused, and a second runtime with the same credentials replaces it.
    failPending(previous, unavailable('local runtime replaced by a newer connection'));
    previous.socket.close(4000, 'replaced by a newer connection');
  }
  logger.info({ sessionId, replaced: Boolean(previous) }, 'tunnel connected');
  socket.on('pong', () => {
    conn.alive = true;
  });
  socket.on('message', (data, isBinary) => {
    if (isBinary) return;
    const frame = parseFrame(TunnelReplyFrameSchema, data.toString());
    const pending = frame ? conn.pending.get(frame.id) : undefined;
    if (!frame || !pending) return;
    clearTimeout(pending.timer);
    conn.pending.delete(frame.id);
    pending.resolve({ status: frame.status, reply: frame.reply });
  });
  socket.on('error', (error) => logger.warn({ sessionId, err: error.message }, 'tunnel socket error'));
  socket.on('close', (code) => {
    if (connections.get(sessionId) === conn) connections.delete(sessionId);
    failPending(conn, unavailable('local runtime disconnected during the call'));
    logger.info({ sessionId, code }, 'tunnel disconnected');
  });
}

/** Pings every connection each `heartbeatMs`; one that did not answer the previous ping is closed. */
function startHeartbeat(
  connections: Map<string, Connection>,
  logger: Logger,
  heartbeatMs: number,
): NodeJS.Timeout {
  const heartbeat = setInterval(() => {
    for (const conn of connections.values()) {
      if (!conn.alive) {
        logger.warn({ sessionId: conn.sessionId }, 'tunnel missed a heartbeat; closing it');
        conn.socket.terminate();
        continue;
      }
      conn.alive = false;
      conn.socket.ping();
    }
  }, heartbeatMs);
  heartbeat.unref();
  return heartbeat;
}

/** Sends one call over an open connection and waits for its reply, the connection's close or the timeout. */
function sendCall(
  conn: Connection,
  frame: Omit<TunnelCallFrame, 'type' | 'id'>,
  timeoutMs: number,
): Promise<{ status: number; reply: ForwardReply }> {
  const id = randomUUID();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      conn.pending.delete(id);
      reject(unavailable(`local runtime did not answer within ${timeoutMs} ms`, 504));
    }, timeoutMs);
    conn.pending.set(id, { resolve, reject, timer });
    conn.socket.send(JSON.stringify({ type: 'call', id, ...frame }), (error) => {
      if (!error) return;
      const pending = conn.pending.get(id);
      if (!pending) return;
      clearTimeout(pending.timer);
      conn.pending.delete(id);
      reject(unavailable('local runtime disconnected during the call'));
    });
  });
}

export function createTunnelHub(options: TunnelHubOptions): TunnelHub {
  const { logger } = options;
  const secretOf = sessionSecrets(options.sessions);
  const connections = new Map<string, Connection>();
  const wss = new WebSocketServer({ noServer: true, maxPayload: MAX_FRAME_BYTES });
  const heartbeat = startHeartbeat(connections, logger, options.heartbeatMs);
  let closing: Promise<void> | undefined;

  return {
    handleUpgrade(req, socket, head) {
      const path = (req.url ?? '').split('?')[0];
      if (path !== TUNNEL_CONNECT_PATH) return false;
      socket.on('error', () => socket.destroy());
      authenticate(req, secretOf, options.redis).then(
        (sessionId) => {
          if (!sessionId) {
            refuse(socket, 401);
            return;
          }
          wss.handleUpgrade(req, socket, head, (ws) => attach(connections, logger, sessionId, ws));
        },
        (error: unknown) => {
          logger.error({ err: error }, 'tunnel connect check failed');
          refuse(socket, 401);
        },
      );
      return true;
    },
    connected(sessionId) {
      return connections.get(sessionId)?.socket.readyState === WebSocket.OPEN;
    },
    call(sessionId, frame, timeoutMs) {
      const conn = connections.get(sessionId);
      if (!conn || conn.socket.readyState !== WebSocket.OPEN) {
        return Promise.reject(unavailable('local runtime not connected'));
      }
      return sendCall(conn, frame, timeoutMs);
    },
    close() {
      closing ??= (async () => {
        clearInterval(heartbeat);
        for (const conn of connections.values()) {
          failPending(conn, unavailable('the edge is shutting down'));
          conn.socket.close(1001, 'edge shutting down');
        }
        connections.clear();
        await new Promise<void>((resolve) => wss.close(() => resolve()));
      })();
      return closing;
    },
  };
}
