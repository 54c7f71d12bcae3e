// The registry's one error type: a closed set of codes, each with its HTTP status, so every error a
// route can raise is known in advance and answered the same way.
// The error middleware turns it into the spec's body `{error}`; nothing else writes error bodies.

export const API_ERROR_STATUS = {
  bad_request: 400,
  /** No proof, or one that does not verify (WWW-Authenticate says why). */
  unauthorized: 401,
  /** A valid proof that does not cover what was asked. */
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  gone: 410,
  payload_too_large: 413,
  /** Over a per-client limit (reports): Retry-After says when to try again. */
  too_many_requests: 429,
  internal: 500,
  /** A service the request needs (the queue, the code host, the OIDC issuer) did not answer. */
  unavailable: 503,
} as const;

export type ApiErrorCode = keyof typeof API_ERROR_STATUS;

export class ApiError extends Error {
  readonly code: ApiErrorCode;
  readonly status: number;
  /** Response headers the error needs (WWW-Authenticate on a 401). */
  readonly headers: Record<string, string>;

  constructor(
    code: ApiErrorCode,
    message: string,
    options?: { cause?: unknown; headers?: Record<string, string> },
  ) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'ApiError';
    this.code = code;
    this.status = API_ERROR_STATUS[code];
    this.headers = options?.headers ?? {};
  }
}

export const badRequest = (message: string) => new ApiError('bad_request', message);
export const notFound = (message: string) => new ApiError('not_found', message);
export const gone = (message: string) => new ApiError('gone', message);
export const forbidden = (message: string) => new ApiError('forbidden', message);
export const conflict = (message: string) => new ApiError('conflict', message);
export const unavailable = (message: string, cause?: unknown) =>
  new ApiError('unavailable', message, { cause });

/**
 * A 401 with RFC 6750's challenge. The description repeats the message minus characters a quoted
 * string or a header cannot hold.
 */
export function unauthorized(message: string): ApiError {
  // A header holds printable ASCII only: quotes and backslashes would end the quoted string.
  const description = message
    .replace(/…/g, '...')
    .replace(/["\\]/g, "'")
    .replace(/[^\x20-\x7e]/g, '')
    .slice(0, 300);
  return new ApiError('unauthorized', message, {
    headers: {
      'WWW-Authenticate': `Bearer realm="pkgreg", error="invalid_token", error_description="${description}"`,
    },
  });
}
