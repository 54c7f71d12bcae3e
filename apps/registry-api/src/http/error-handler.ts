import type { Logger } from '@pkgreg/server-kit';
import type { ErrorRequestHandler, RequestHandler } from 'express';
import { ApiError } from './api-error.js';
import { requestIdOf } from './request-id.js';

const NOT_FOUND_MESSAGE = 'Not found';
const INTERNAL_MESSAGE = 'Internal server error';

/** Unknown routes: the same `{error}` body as every other failure. */
export function notFoundHandler(): RequestHandler {
  return (_req, _res, next) => next(new ApiError('not_found', NOT_FOUND_MESSAGE));
}

interface HttpLikeError {
  status?: number;
  statusCode?: number;
  expose?: boolean;
  type?: string;
  message?: string;
}

// Express and body-parser raise http-errors (status + expose); map them onto our closed set so a
// malformed JSON body or a bad percent-encoding is a 400, never a 5xx with a stack.
function toApiError(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  const e = (error ?? {}) as HttpLikeError;
  const status = e.status ?? e.statusCode;
  if (status === 413) return new ApiError('payload_too_large', 'Request body too large');
  if (e.type === 'entity.parse.failed') return new ApiError('bad_request', 'Malformed JSON body');
  if (status && status >= 400 && status < 500) {
    if (status === 404) return new ApiError('not_found', NOT_FOUND_MESSAGE);
    return new ApiError('bad_request', e.expose && e.message ? e.message : 'Bad request');
  }
  return new ApiError('internal', INTERNAL_MESSAGE, { cause: error });
}

/** The one error middleware: writes `{error}` and logs with the request id; stacks stay in the log. */
export function errorHandler(logger: Logger): ErrorRequestHandler {
  return (error, req, res, _next) => {
    const apiError = toApiError(error);
    const context = {
      requestId: requestIdOf(res),
      method: req.method,
      path: req.path,
      status: apiError.status,
    };
    if (apiError.status >= 500) logger.error({ ...context, err: error }, 'request failed');
    else logger.info({ ...context, code: apiError.code, message: apiError.message }, 'request rejected');
    if (res.headersSent) {
      res.destroy();
      return;
    }
    res.status(apiError.status).json({ error: apiError.message });
  };
}
