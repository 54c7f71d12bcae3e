// How the client reaches the registry: a function each caller injects, so each keeps its own HTTP
// settings (the CLI's node:http with its timers, the edge's undici pool with keep-alive and trace
// headers, the web's fetch with `cache: 'no-cache'`). The client decides what to send, how much of a
// body to read, whether to try again and what an answer means; the transport only moves bytes.

export type Method = 'GET' | 'POST' | 'PUT' | 'DELETE';

export interface TransportRequest {
  method: Method;
  /** Absolute, or relative to the page in a browser (a same-origin registry). */
  url: string;
  headers: Record<string, string>;
  /** JSON text, or the bytes of an upload. */
  body?: string | Uint8Array;
  /** A download: its body may take longer than a timeout as a whole, so only silences should be timed. */
  download: boolean;
  /** The request should complete even when its caller goes away (a page unloading: fetch's keepalive). */
  keepalive: boolean;
  signal?: AbortSignal;
}

export interface BodyRead {
  /** At most the bound asked for: the start of the body when it was longer. */
  bytes: Uint8Array;
  /** The body went on past the bound; nothing past it was kept and the rest is not read. */
  truncated: boolean;
}

export interface TransportResponse {
  status: number;
  /** The reason phrase, where the protocol has one ('' otherwise). */
  statusText: string;
  /** A header's value by its lower-case name (the first one when repeated). */
  header(name: string): string | undefined;
  /**
   * Reads the body up to `maxBytes`: the read stops at the first chunk past the bound (the connection is
   * dropped) and says `truncated`. `onChunk` hears how many bytes have arrived so far.
   */
  read(maxBytes: number, onChunk?: (received: number) => void): Promise<BodyRead>;
  /** Drops the body unread. */
  discard(): void;
}

export type Transport = (request: TransportRequest) => Promise<TransportResponse>;

/**
 * A request that got no answer: refused, timed out, reset. A transport throws this (the caller's own
 * abort goes through unchanged); `notSent` says the request provably never reached the registry (no
 * connection was made), which is when even a request that must not arrive twice may be sent again.
 */
export class TransportError extends Error {
  /** What went wrong, as a code (`ECONNREFUSED`, `TimeoutError`, ...). */
  readonly code: string;
  /** What a message shows: the code, or a sentence for a timeout. */
  readonly reason: string;
  readonly notSent: boolean;

  constructor(code: string, options: { reason?: string; notSent?: boolean; cause?: unknown } = {}) {
    super(options.reason ?? code, { cause: options.cause });
    this.name = 'TransportError';
    this.code = code;
    this.reason = options.reason ?? code;
    this.notSent = options.notSent ?? false;
  }
}

/**
 * Reads a body's chunks up to `maxBytes`, for a transport's `read`: at the first chunk past the bound,
 * `stop` is called (drop the connection) and the start of the body comes back `truncated`. `onChunk`
 * hears the bytes received so far after each chunk kept.
 */
export async function readChunks(
  chunks: AsyncIterable<Uint8Array>,
  maxBytes: number,
  stop: () => void,
  onChunk?: (received: number) => void,
): Promise<BodyRead> {
  const kept: Uint8Array[] = [];
  let received = 0;
  for await (const chunk of chunks) {
    received += chunk.length;
    kept.push(chunk);
    if (received > maxBytes) {
      stop();
      return { bytes: joined(kept, maxBytes), truncated: true };
    }
    onChunk?.(received);
  }
  return { bytes: joined(kept, received), truncated: false };
}

/** The first `size` bytes of `chunks` as one array. */
function joined(chunks: readonly Uint8Array[], size: number): Uint8Array {
  if (chunks.length === 1 && chunks[0]?.length === size) return chunks[0];
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    const part = chunk.subarray(0, size - offset);
    bytes.set(part, offset);
    offset += part.length;
    if (offset === size) break;
  }
  return bytes;
}
