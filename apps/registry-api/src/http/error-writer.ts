import type { ServerResponse } from 'node:http';
import {
  dependencyOutageOf,
  type Logger,
  OUTAGE_RETRY_AFTER_SECONDS,
  outageMonitorOf,
  setRejectReason,
} from '@pkgreg/server-kit';
import { ApiError } from './api-error.js';
import { NO_STORE } from './cache-policy.js';
import { JSON_CONTENT_TYPE } from './etag.js';

// The registry's one error writer: every failure, from Express's error middleware or from the package
// endpoints answered before Express, becomes the contract's `{error}` body and one log line with the
// request id. Stacks stay in the log.

const NOT_FOUND_MESSAGE = 'Not found';
const INTERNAL_MESSAGE = 'Internal server error';
const UNAVAILABLE_MESSAGE = 'Service temporarily unavailable, try again shortly';

interface HttpLikeError {
  status?: number;
  statusCode?: number;
  expose?: boolean;
  type?: string;
  message?: string;
}

/**
 * Express and body-parser raise http-errors (status + expose); they map onto our closed set so a
 * malformed JSON body or a bad percent-encoding is a 400, never a 5xx with a stack.
 */
export function toApiError(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  // PostgreSQL or Redis down: retryable, so a 503 that says when to come back, never a 500.
  if (dependencyOutageOf(error)) {
    return new ApiError('unavailable', UNAVAILABLE_MESSAGE, {
      cause: error,
      headers: { 'Retry-After': String(OUTAGE_RETRY_AFTER_SECONDS) },
    });
  }
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

export const notFoundError = (): ApiError => new ApiError('not_found', NOT_FOUND_MESSAGE);

export interface ErrorContext {
  logger: Logger;
  requestId: string;
  method: string | undefined;
  path: string;
}

export function writeError(res: ServerResponse, error: unknown, context: ErrorContext): void {
  const apiError = toApiError(error);
  const fields = {
    requestId: context.requestId,
    method: context.method,
    path: context.path,
    status: apiError.status,
  };
  // An outage is logged once by the process's monitor (unavailable, then recovered), not per request.
  if (outageMonitorOf(context.logger).failed(error)) context.logger.debug(fields, 'request refused: outage');
  else if (apiError.status >= 500) context.logger.error({ ...fields, err: error }, 'request failed');
  else context.logger.info({ ...fields, code: apiError.code, message: apiError.message }, 'request rejected');
  if (res.headersSent) {
    res.destroy();
    return;
  }
  setRejectReason(res, apiError.code);
  const body = Buffer.from(JSON.stringify({ error: apiError.message }));
  // No cache keeps an error (a 404 of a package published a moment later, a 503 of an outage); the
  // validators a route set before failing describe the answer it did not send.
  res.removeHeader('ETag');
  res.removeHeader('Last-Modified');
  res.writeHead(apiError.status, {
    'Cache-Control': NO_STORE,
    // Every 503 is retryable (a dependency, the queue, the code host): it says when to come back.
    ...(apiError.status === 503 ? { 'Retry-After': String(OUTAGE_RETRY_AFTER_SECONDS) } : {}),
    ...apiError.headers,
    'Content-Type': JSON_CONTENT_TYPE,
    'Content-Length': body.length,
  });
  res.end(body);
}
