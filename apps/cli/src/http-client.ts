import type { IncomingMessage } from 'node:http';
import {
  type RegistryClient as Client,
  createRegistryClient as createClient,
  JSON_MAX_BYTES,
  type RegistryError,
  type RetryPolicy,
  readChunks,
  type Transport,
  TransportError,
} from '@pkgreg/registry-client';
import type { Credentials } from './credentials.js';
import { CliError, EXIT } from './errors.js';
import { CLI_VERSION } from './version.js';

// The CLI's side of @pkgreg/registry-client: requests sent with Node's own http/https (undici would
// cost start-up time), the registry's failures as CliErrors with the exit codes of README: Exit codes.

export { JSON_MAX_BYTES, type RetryPolicy };

export const DEFAULT_RETRY: RetryPolicy = {
  attempts: 4,
  baseDelayMs: 250,
  maxDelayMs: 4_000,
  maxRetryAfterMs: 30_000,
};

export interface ClientOptions {
  baseUrl: string;
  timeoutMs: number;
  retry?: RetryPolicy;
  /** Called with one line per request and retry when --verbose is on. */
  debug?: (line: string) => void;
  /** The token every request carries (unless a call sends a proof or nothing). */
  credentials?: Credentials | undefined;
}

/** The client's calls; every failure a CliError. */
export type RegistryClient = Client;

/** A connection not made (and, for https, secured) within this long fails with CONNECT_TIMEOUT. */
const CONNECT_TIMEOUT_MS = 10_000;
// The code undici gave this failure; kept so the message stays what it was.
const CONNECT_TIMEOUT = 'UND_ERR_CONNECT_TIMEOUT';

// Errors after which the request never reached the server, so even a non-idempotent POST may be resent.
const NOT_SENT_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', CONNECT_TIMEOUT]);

function transportError(error: unknown, timeoutMs: number): TransportError {
  if (error instanceof TransportError) return error;
  const err = error as { code?: unknown; name?: string; cause?: { code?: unknown } };
  if (err.name === 'TimeoutError') {
    return new TransportError('TimeoutError', { reason: `timed out after ${timeoutMs} ms`, cause: error });
  }
  const code =
    typeof err.code === 'string'
      ? err.code
      : typeof err.cause?.code === 'string'
        ? err.cause.code
        : (err.name ?? 'unknown');
  return new TransportError(code, { notSent: NOT_SENT_CODES.has(code), cause: error });
}

function failure(name: string, code: string | undefined, message: string): Error {
  return Object.assign(new Error(message), { name, ...(code ? { code } : {}) });
}

/**
 * Node's own http/https (no redirect followed, no body decoded). The timeout bounds the whole exchange,
 * body included, or for a download only the silences: until the headers, then between chunks. A
 * failure destroys the request and the response with an error whose `name` or `code` says why.
 */
export function nodeTransport(timeoutMs: number): Transport {
  return (request) =>
    new Promise((resolve, reject) => {
      // Loaded here: https brings TLS, which a plain-http registry never needs.
      const { request: send } = request.url.startsWith('https:')
        ? process.getBuiltinModule('node:https')
        : process.getBuiltinModule('node:http');
      const headers = { ...request.headers };
      if (request.method !== 'GET') headers['content-length'] = String(Buffer.byteLength(request.body ?? ''));
      const req = send(request.url, { method: request.method, headers });
      let response: IncomingMessage | undefined;
      const fail = (error: Error) => {
        req.destroy(error);
        response?.destroy(error);
      };
      const timedOut = () => fail(failure('TimeoutError', undefined, `timed out after ${timeoutMs} ms`));
      let timer = setTimeout(timedOut, timeoutMs);
      const connectTimer = setTimeout(
        () => fail(failure('Error', CONNECT_TIMEOUT, `no connection within ${CONNECT_TIMEOUT_MS} ms`)),
        CONNECT_TIMEOUT_MS,
      );
      const finish = () => {
        clearTimeout(timer);
        clearTimeout(connectTimer);
      };
      // A download may take longer than the timeout as a whole: only silence counts there.
      const touch = () => {
        if (!request.download) return;
        clearTimeout(timer);
        timer = setTimeout(timedOut, timeoutMs);
      };
      req.on('socket', (socket) => {
        if (!socket.connecting) clearTimeout(connectTimer);
        else
          socket.once('encrypted' in socket ? 'secureConnect' : 'connect', () => clearTimeout(connectTimer));
      });
      req.on('error', (error) => {
        finish();
        reject(transportError(error, timeoutMs));
      });
      req.on('response', (res) => {
        response = res;
        clearTimeout(connectTimer);
        touch();
        resolve({
          status: res.statusCode ?? 0,
          statusText: res.statusMessage ?? '',
          header: (name) => {
            const value = res.headers[name];
            return Array.isArray(value) ? value[0] : value;
          },
          async read(maxBytes, onChunk) {
            try {
              // Each chunk restarts a download's silence timer.
              return await readChunks(
                res,
                maxBytes,
                () => res.destroy(),
                (received) => {
                  touch();
                  onChunk?.(received);
                },
              );
            } catch (error) {
              throw transportError(error, timeoutMs);
            } finally {
              finish();
            }
          },
          discard() {
            res.destroy();
            finish();
          },
        });
      });
      req.end(request.body);
    });
}

/**
 * A registry failure as the CLI reports it: exit 3 not found, 4 unavailable or malformed, 5 a download
 * too big, 8 a token refused (or needed).
 */
function cliError(error: RegistryError, credentials: Credentials | undefined): CliError {
  switch (error.code) {
    case 'status': {
      const message = error.error ?? `HTTP ${error.status}`;
      // A 401 to our token (exit 8); to a proof of ownership sent instead (publish), exit 1.
      if (error.status === 401 && credentials && error.credentialsSent) {
        const registry = new URL(error.baseUrl).host;
        const fix =
          credentials?.source === 'PKGREG_TOKEN'
            ? 'set PKGREG_TOKEN to a valid token, or unset it and run pkgreg login'
            : 'run pkgreg login';
        return new CliError(
          EXIT.auth,
          `Your token for ${registry} (from ${credentials.source}) was refused: ${message}; ${fix}`,
          `HTTP 401 ${error.request}`,
        );
      }
      // 410: an operator removed the package (docs/versions.md); its reason is the message.
      if (error.status === 404 || error.status === 410) return new CliError(EXIT.notFound, error.message);
      if ((error.status ?? 0) >= 500)
        return new CliError(EXIT.unavailable, `Registry unavailable at ${error.baseUrl}: ${message}`);
      return new CliError(EXIT.error, error.message, `HTTP ${error.status}`);
    }
    case 'unavailable':
      return new CliError(
        EXIT.unavailable,
        error.message,
        `${error.request} failed after retries (up to ${error.attempts} attempts)`,
      );
    case 'malformed':
      return new CliError(
        EXIT.unavailable,
        error.message,
        error.issues ? JSON.stringify(error.issues) : error.text,
      );
    case 'too_large':
      return new CliError(error.download ? EXIT.integrity : EXIT.unavailable, error.message);
  }
}

export function createRegistryClient(options: ClientOptions): RegistryClient {
  return createClient({
    baseUrl: options.baseUrl,
    transport: nodeTransport(options.timeoutMs),
    retry: options.retry ?? DEFAULT_RETRY,
    maxJsonBytes: JSON_MAX_BYTES,
    headers: { 'user-agent': `pkgreg/${CLI_VERSION} node/${process.versions.node}` },
    mapError: (error) => cliError(error, options.credentials),
    credentials: () => options.credentials?.token,
    log: options.debug,
  });
}
