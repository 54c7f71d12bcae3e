import type { Logger } from '@pkgreg/server-kit';
import type { ErrorRequestHandler, RequestHandler } from 'express';
import { notFoundError, writeError } from './error-writer.js';
import { requestIdOf } from './request-id.js';

/** Unknown routes: the same `{error}` body as every other failure. */
export function notFoundHandler(): RequestHandler {
  return (_req, _res, next) => next(notFoundError());
}

/** Express's error middleware: the one error writer, with the request id Express's middleware set. */
export function errorHandler(logger: Logger): ErrorRequestHandler {
  return (error, req, res, _next) => {
    writeError(res, error, { logger, requestId: requestIdOf(res), method: req.method, path: req.path });
  };
}
