import { type Transport, TransportError } from './transport.js';

// A transport over the Fetch API: what a browser has (the web UI), and Node too.

export interface FetchTransportOptions {
  /** Default: the global fetch. */
  fetch?: typeof fetch;
  /** Added to every request (the web UI's `cache: 'no-cache'`). */
  init?: RequestInit;
  /** Each exchange, its body included, is given up after this long. */
  timeoutMs?: number;
}

function failure(error: unknown, timeoutMs: number | undefined): TransportError {
  const name = (error as { name?: unknown }).name;
  if (name === 'TimeoutError') {
    return new TransportError('TimeoutError', { reason: `timed out after ${timeoutMs} ms`, cause: error });
  }
  // Fetch says no more than "failed" (a TypeError): whether the request left is not known.
  return new TransportError(typeof name === 'string' ? name : 'network', { cause: error });
}

/** Copies the first `size` bytes of `chunks` into one array. */
function joined(chunks: readonly Uint8Array[], size: number): Uint8Array {
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

export function fetchTransport(options: FetchTransportOptions = {}): Transport {
  const send = options.fetch ?? ((input, init) => fetch(input, init));
  return async (request) => {
    const timeout = options.timeoutMs === undefined ? undefined : AbortSignal.timeout(options.timeoutMs);
    const signal =
      timeout && request.signal ? AbortSignal.any([request.signal, timeout]) : (timeout ?? request.signal);
    // The caller's own abort is not a failure of the registry: it goes through as it is.
    const rethrow = (error: unknown): never => {
      if (request.signal?.aborted) throw error;
      throw failure(error, options.timeoutMs);
    };
    let response: Response;
    try {
      response = await send(request.url, {
        ...options.init,
        method: request.method,
        headers: request.headers,
        body: request.body,
        keepalive: request.keepalive,
        signal,
      });
    } catch (error) {
      return rethrow(error);
    }
    return {
      status: response.status,
      statusText: response.statusText,
      header: (name) => response.headers.get(name) ?? undefined,
      async read(maxBytes, onChunk) {
        const reader = response.body?.getReader();
        const chunks: Uint8Array[] = [];
        let size = 0;
        let truncated = false;
        try {
          while (reader) {
            const { done, value } = await reader.read();
            if (done) break;
            chunks.push(value);
            size += value.length;
            if (size > maxBytes) {
              truncated = true;
              await reader.cancel();
              break;
            }
            onChunk?.(size);
          }
        } catch (error) {
          return rethrow(error);
        }
        return { bytes: joined(chunks, Math.min(size, maxBytes)), truncated };
      },
      discard() {
        response.body?.cancel().catch(() => {});
      },
    };
  };
}
