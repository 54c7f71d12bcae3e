import type { z } from 'zod';

/**
 * - `status`: the registry answered with an error status (its own message, when it sent one, in `error`);
 * - `unavailable`: no usable answer: no connection, a timeout, or 429 / 5xx until the retries ran out;
 * - `malformed`: a success answer that is not JSON, or not what the contract says;
 * - `too_large`: a body past its bound (a JSON answer's, or the one a download was given).
 */
export type RegistryErrorCode = 'status' | 'unavailable' | 'malformed' | 'too_large';

interface RegistryErrorFields {
  code: RegistryErrorCode;
  /** What was asked for, for messages: `@scope/name@1.2.0`, `search`. */
  subject: string;
  /** `GET /api/search?q=pdf`: the method and the path below the registry's address. */
  request: string;
  baseUrl: string;
  /** Attempts the retry policy allowed (1 without one). */
  attempts: number;
  /** `status`: the HTTP status and reason phrase. */
  status?: number;
  statusText?: string;
  /** `status`: the `error` of the registry's error body, when it sent one. */
  error?: string;
  /** `status`: the request carried the client's own credentials (not a proof, not anonymous). */
  credentialsSent?: boolean;
  /** `unavailable`: the last failure (`ECONNREFUSED`, `HTTP 500: database is down`, `timed out after 300 ms`). */
  failure?: string;
  /** `malformed`: the first issues found, or the start of a body that is not JSON. */
  issues?: z.core.$ZodIssue[];
  text?: string;
  /** `too_large`: how many bytes came (`123` or `more than 100`), the bound, and whether it was a download. */
  received?: string;
  maxBytes?: number;
  download?: boolean;
}

function messageOf(f: RegistryErrorFields): string {
  switch (f.code) {
    case 'status':
      return `${f.subject}: ${f.error ?? `HTTP ${f.status}`}`;
    case 'unavailable':
      return `Registry unavailable at ${f.baseUrl}: ${f.failure}`;
    case 'malformed': {
      if (!f.issues) return `Malformed response from registry (${f.subject}): not JSON`;
      const issue = f.issues[0];
      const where = issue?.path.length ? issue.path.join('.') : 'body';
      return `Malformed response from registry (${f.subject}): ${where}: ${issue?.message}`;
    }
    case 'too_large':
      return f.download
        ? `The registry sent ${f.received} bytes where at most ${f.maxBytes} were expected`
        : `Malformed response from registry (${f.request}): ${f.received} bytes, more than the ${f.maxBytes} a response may have`;
  }
}

/** The one error the client throws (besides the caller's own abort); each caller maps `code` to its own. */
export class RegistryError extends Error implements RegistryErrorFields {
  readonly code: RegistryErrorCode;
  readonly subject: string;
  readonly request: string;
  readonly baseUrl: string;
  readonly attempts: number;
  readonly status?: number;
  readonly statusText?: string;
  readonly error?: string;
  readonly credentialsSent?: boolean;
  readonly failure?: string;
  readonly issues?: z.core.$ZodIssue[];
  readonly text?: string;
  readonly received?: string;
  readonly maxBytes?: number;
  readonly download?: boolean;

  constructor(fields: RegistryErrorFields) {
    super(messageOf(fields));
    this.name = 'RegistryError';
    this.code = fields.code;
    this.subject = fields.subject;
    this.request = fields.request;
    this.baseUrl = fields.baseUrl;
    this.attempts = fields.attempts;
    this.status = fields.status;
    this.statusText = fields.statusText;
    this.error = fields.error;
    this.credentialsSent = fields.credentialsSent;
    this.failure = fields.failure;
    this.issues = fields.issues;
    this.text = fields.text;
    this.received = fields.received;
    this.maxBytes = fields.maxBytes;
    this.download = fields.download;
  }
}
