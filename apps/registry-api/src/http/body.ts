import type { IncomingMessage, ServerResponse } from 'node:http';
import { ApiError } from './api-error.js';

/** Largest JSON request body accepted (publish and owner actions take small ones; anything bigger is a 413). */
export const JSON_BODY_LIMIT = '16kb';
export const JSON_BODY_LIMIT_BYTES = 16 * 1024;

/**
 * A declared Content-Length over `limitBytes` is refused before a byte of the body is read, and the
 * connection is closed after the answer: the body parser would otherwise read (and discard) the whole
 * body before answering. A chunked body is cut by the parser at the limit, and a slow one by the
 * server's request timeout (server-kit listen.ts).
 */
export function oversizedBody(
  req: IncomingMessage,
  res: ServerResponse,
  limitBytes: number = JSON_BODY_LIMIT_BYTES,
): ApiError | undefined {
  const declared = req.headers['content-length'];
  if (declared === undefined || !(Number(declared) > limitBytes)) return undefined;
  res.setHeader('Connection', 'close');
  return new ApiError('payload_too_large', 'Request body too large');
}
