import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

// A local server speaking OpenAI's embeddings protocol (POST /v1/embeddings with {model, input,
// dimensions?, encoding_format?}, answered with {object: "list", data: [{object: "embedding", index,
// embedding}], model, usage}), as OpenAI, Ollama, vLLM and LiteLLM serve it. Its vectors are
// deterministic and meaningful enough to rank by: words of one concept share an axis (so "database" is
// near "postgres"), other words are hashed onto the remaining axes.

export const DEFAULT_CONCEPTS: readonly (readonly string[])[] = [
  ['database', 'databases', 'postgres', 'postgresql', 'sql', 'mysql', 'sqlite'],
  ['cache', 'caches', 'caching', 'redis', 'memcached'],
  ['deploy', 'deploys', 'deployment', 'release', 'releases', 'rollout'],
  ['food', 'pizza', 'pasta', 'lunch', 'dinner'],
  ['cat', 'cats', 'dog', 'dogs', 'pet', 'pets'],
];

export type EmbeddingsBehaviour =
  /** Answer with the embeddings. */
  | 'ok'
  /** Answer `status` (default 500) with an OpenAI error body. */
  | 'error'
  /** Answer after `delayMs`. */
  | 'slow'
  /** Answer 200 with a body that is not the protocol's shape. */
  | 'malformed';

export interface SeenEmbeddingsRequest {
  authorization: string | undefined;
  model: unknown;
  input: string[];
  dimensions: unknown;
}

export interface EmbeddingsServerOptions {
  /** Output length when a request names none (default 32). */
  dimensions?: number;
  concepts?: readonly (readonly string[])[];
  /** When set, requests must carry `Authorization: Bearer <apiKey>` (else 401, as OpenAI answers). */
  apiKey?: string;
}

export interface EmbeddingsServer {
  /** Base URL, ending in /v1 (as OpenAI's is configured). */
  readonly url: string;
  readonly requests: SeenEmbeddingsRequest[];
  behaviour: EmbeddingsBehaviour;
  status: number;
  delayMs: number;
  /** The vector this server answers for `text` at `dimensions` values (not normalized). */
  vectorOf(text: string, dimensions?: number): number[];
  close(): Promise<void>;
}

function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash;
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

function send(res: ServerResponse, status: number, body: unknown): void {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

const openAiError = (message: string, type: string, code: string | null) => ({
  error: { message, type, param: null, code },
});

export async function startEmbeddingsServer(
  options: EmbeddingsServerOptions = {},
): Promise<EmbeddingsServer> {
  const concepts = options.concepts ?? DEFAULT_CONCEPTS;
  const axisOf = new Map<string, number>();
  concepts.forEach((words, axis) => {
    for (const word of words) axisOf.set(word, axis);
  });
  const defaultDimensions = options.dimensions ?? 32;

  const vectorOf = (text: string, dimensions = defaultDimensions): number[] => {
    const vector = new Array<number>(dimensions).fill(0);
    const free = dimensions - concepts.length - 1;
    for (const word of text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []) {
      const axis = axisOf.get(word) ?? concepts.length + (fnv1a(word) % free);
      vector[axis] = (vector[axis] ?? 0) + 1;
    }
    // A constant component: no text maps to the zero vector, which has no direction.
    vector[dimensions - 1] = 0.1;
    return vector;
  };

  const server: EmbeddingsServer = {
    url: '',
    requests: [],
    behaviour: 'ok',
    status: 500,
    delayMs: 2000,
    vectorOf,
    close: async () => {},
  };

  const http = createServer((req, res) => {
    void (async () => {
      if (req.method !== 'POST' || req.url !== '/v1/embeddings') {
        send(
          res,
          404,
          openAiError(`Unknown request URL: ${req.method} ${req.url}`, 'invalid_request_error', null),
        );
        return;
      }
      let body: { model?: unknown; input?: unknown; dimensions?: unknown };
      try {
        body = JSON.parse(await readBody(req)) as typeof body;
      } catch {
        send(
          res,
          400,
          openAiError('We could not parse the JSON body of your request.', 'invalid_request_error', null),
        );
        return;
      }
      const input = typeof body.input === 'string' ? [body.input] : body.input;
      const authorization = req.headers.authorization;
      if (!Array.isArray(input) || !input.every((i) => typeof i === 'string')) {
        send(
          res,
          400,
          openAiError("'input' must be a string or an array of strings", 'invalid_request_error', null),
        );
        return;
      }
      server.requests.push({ authorization, model: body.model, input, dimensions: body.dimensions });
      if (options.apiKey && authorization !== `Bearer ${options.apiKey}`) {
        send(
          res,
          401,
          openAiError('Incorrect API key provided.', 'invalid_request_error', 'invalid_api_key'),
        );
        return;
      }
      const dimensions =
        typeof body.dimensions === 'number' &&
        Number.isInteger(body.dimensions) &&
        body.dimensions > concepts.length + 1
          ? body.dimensions
          : defaultDimensions;
      switch (server.behaviour) {
        case 'error':
          send(res, server.status, openAiError('The server had an error.', 'server_error', null));
          return;
        case 'malformed':
          send(res, 200, { data: [{ embedding: 'not a vector' }] });
          return;
        case 'slow':
          await new Promise((resolve) => setTimeout(resolve, server.delayMs));
          break;
        case 'ok':
          break;
      }
      if (res.destroyed) return;
      send(res, 200, {
        object: 'list',
        data: input.map((text, index) => ({
          object: 'embedding',
          index,
          embedding: vectorOf(text, dimensions),
        })),
        model: body.model,
        usage: { prompt_tokens: input.length, total_tokens: input.length },
      });
    })();
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const { port } = http.address() as AddressInfo;
  Object.assign(server, {
    url: `http://127.0.0.1:${port}/v1`,
    close: () =>
      new Promise<void>((resolve) => {
        // A slow answer still pending must not hold the test run open.
        http.closeAllConnections();
        http.close(() => resolve());
      }),
  });
  return server;
}
