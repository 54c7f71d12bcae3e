// The registry's one error type: a closed set of codes, each with its HTTP status, so every error a
// route can raise is known in advance and answered the same way.
// The error middleware turns it into the spec's body `{error}`; nothing else writes error bodies.

export const API_ERROR_STATUS = {
  bad_request: 400,
  not_found: 404,
  gone: 410,
  payload_too_large: 413,
  /** Over a per-client limit (reports): Retry-After says when to try again. */
  too_many_requests: 429,
  internal: 500,
} as const;

export type ApiErrorCode = keyof typeof API_ERROR_STATUS;

export class ApiError extends Error {
  readonly code: ApiErrorCode;
  readonly status: number;

  constructor(code: ApiErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ApiError';
    this.code = code;
    this.status = API_ERROR_STATUS[code];
  }
}

export const badRequest = (message: string) => new ApiError('bad_request', message);
export const notFound = (message: string) => new ApiError('not_found', message);
export const gone = (message: string) => new ApiError('gone', message);
