// An OpenAI-compatible embeddings endpoint (POST {baseUrl}/embeddings, answered with
// {data: [{embedding: [...], index}]}): OpenAI, Azure OpenAI's v1 API, Ollama, vLLM, llama.cpp and
// LiteLLM all speak it. The API key is sent as a bearer token and never logged; the texts are memory
// content, so errors name a reason, never the request.

export interface EmbedderConfig {
  /** e.g. https://api.openai.com/v1 or http://127.0.0.1:11434/v1 */
  baseUrl: string;
  model: string;
  apiKey?: string;
  /** Sent as `dimensions` (models that can shorten their output); otherwise the model's own length. */
  dimensions?: number;
  /** Default timeout of one request (ms). */
  timeoutMs: number;
}

export type EmbedFailure = 'timeout' | 'http_error' | 'network_error' | 'bad_answer';

export type EmbedOutcome =
  | { ok: true; vectors: Float32Array[] }
  | {
      ok: false;
      reason: EmbedFailure;
      /** HTTP status for `http_error`. */
      status?: number;
    };

/** Computes embeddings: unit-length vectors (cosine similarity = dot product), one per text, in order. */
export interface Embedder {
  readonly model: string;
  /** The requested output length, when configured (stored embeddings of another length are redone). */
  readonly dimensions?: number;
  embed(texts: string[], options?: { timeoutMs?: number }): Promise<EmbedOutcome>;
}

/** The embeddings of an answer in input order, or null when it is not the protocol's shape. */
function embeddingsOf(json: unknown, expected: number): unknown[][] | null {
  const data = (json as { data?: unknown } | null)?.data;
  if (!Array.isArray(data) || data.length !== expected) return null;
  const items = data as { embedding?: unknown; index?: unknown }[];
  const indexed = items.every((item) => Number.isInteger(item?.index));
  const ordered = indexed ? [...items].sort((a, b) => (a.index as number) - (b.index as number)) : items;
  const embeddings = ordered.map((item) => item?.embedding);
  return embeddings.every((e) => Array.isArray(e) && e.length > 0) ? (embeddings as unknown[][]) : null;
}

/** Scales to unit length; null for a zero or non-finite vector (it has no direction to compare). */
export function normalize(values: ArrayLike<unknown>): Float32Array | null {
  let sum = 0;
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (typeof v !== 'number' || !Number.isFinite(v)) return null;
    sum += v * v;
  }
  if (!(sum > 0)) return null;
  const norm = Math.sqrt(sum);
  const out = new Float32Array(values.length);
  for (let i = 0; i < values.length; i++) out[i] = (values[i] as number) / norm;
  return out;
}

export function createEmbedder(config: EmbedderConfig): Embedder {
  const url = `${config.baseUrl.replace(/\/+$/, '')}/embeddings`;
  return {
    model: config.model,
    ...(config.dimensions ? { dimensions: config.dimensions } : {}),
    async embed(texts, options = {}) {
      if (texts.length === 0) return { ok: true, vectors: [] };
      const body = {
        model: config.model,
        input: texts,
        encoding_format: 'float',
        ...(config.dimensions ? { dimensions: config.dimensions } : {}),
      };
      let response: Response;
      try {
        response = await fetch(url, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            ...(config.apiKey ? { authorization: `Bearer ${config.apiKey}` } : {}),
          },
          body: JSON.stringify(body),
          signal: AbortSignal.timeout(options.timeoutMs ?? config.timeoutMs),
        });
      } catch (error) {
        return { ok: false, reason: isTimeout(error) ? 'timeout' : 'network_error' };
      }
      let json: unknown;
      try {
        if (!response.ok) {
          await response.body?.cancel();
          return { ok: false, reason: 'http_error', status: response.status };
        }
        json = await response.json();
      } catch (error) {
        return { ok: false, reason: isTimeout(error) ? 'timeout' : 'bad_answer' };
      }
      const embeddings = embeddingsOf(json, texts.length);
      if (!embeddings) return { ok: false, reason: 'bad_answer' };
      const vectors: Float32Array[] = [];
      for (const embedding of embeddings) {
        // normalize refuses anything but finite numbers; every vector must have the first one's length.
        const vector = normalize(embedding as number[]);
        if (!vector || vector.length !== embeddings[0]?.length) return { ok: false, reason: 'bad_answer' };
        vectors.push(vector);
      }
      return { ok: true, vectors };
    },
  };
}

function isTimeout(error: unknown): boolean {
  return error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError');
}

/** float32 little-endian bytes, as memory_embeddings stores them. */
export function encodeVector(vector: Float32Array): Buffer {
  const out = Buffer.allocUnsafe(vector.length * 4);
  for (let i = 0; i < vector.length; i++) out.writeFloatLE(vector[i] as number, i * 4);
  return out;
}

export function decodeVector(bytes: Uint8Array): Float32Array {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const out = new Float32Array(bytes.byteLength >> 2);
  for (let i = 0; i < out.length; i++) out[i] = view.getFloat32(i * 4, true);
  return out;
}

/** Cosine similarity of two unit vectors, below 0 counted as 0 (no similarity). */
export function similarity(a: Float32Array, b: Float32Array): number {
  if (a.length !== b.length) return 0;
  let dot = 0;
  for (let i = 0; i < a.length; i++) dot += (a[i] as number) * (b[i] as number);
  return Math.min(1, Math.max(0, dot));
}
