import { readChunks, type Transport, TransportError } from './transport.js';

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

/** A stream's chunks as an async iterable (not every browser iterates a ReadableStream itself). */
async function* chunksOf(reader: ReadableStreamDefaultReader<Uint8Array>): AsyncGenerator<Uint8Array> {
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return;
    yield value;
  }
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
        // A Uint8Array is sent as is (its own ArrayBuffer view, as fetch's types want it).
        body: typeof request.body === 'string' ? request.body : request.body && new Uint8Array(request.body),
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
        if (!reader) return { bytes: new Uint8Array(0), truncated: false };
        try {
          return await readChunks(
            chunksOf(reader),
            maxBytes,
            () => void reader.cancel().catch(() => {}),
            onChunk,
          );
        } catch (error) {
          return rethrow(error);
        }
      },
      discard() {
        response.body?.cancel().catch(() => {});
      },
    };
  };
}
