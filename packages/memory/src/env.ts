import { z } from 'zod';
import { createEmbedder, type Embedder } from './embeddings/embedding-client.js';
import { DEFAULT_SEARCH_SETTINGS, type SearchSettings, searchSettings } from './search/search-settings.js';

// Memory search's settings, as every app that searches or embeds memory (the edge, the runtime worker,
// the local runtime) declares them in its own env.ts: spread this shape into the app's schema, then pass
// the parsed values to memorySettings. Nothing here reads process.env.

const positive = (fallback: number) => z.coerce.number().positive().default(fallback);
const nonNegative = (fallback: number) => z.coerce.number().min(0).default(fallback);
const count = (fallback: number) => z.coerce.number().int().min(1).default(fallback);

export const memoryEnvShape = {
  /**
   * OpenAI-compatible embeddings endpoint base (…/v1; POST {base}/embeddings). Set: puts are embedded by
   * the worker and search blends similarity in. Unset: text and recency only.
   */
  EMBEDDING_BASE_URL: z.url().optional(),
  EMBEDDING_MODEL: z.string().min(1).default('text-embedding-3-small'),
  /** Bearer key for the embeddings endpoint. Never logged, never in job data. */
  EMBEDDING_API_KEY: z.string().optional(),
  /** Output length asked of models that can shorten theirs (`dimensions`); unset: the model's own. */
  EMBEDDING_DIMENSIONS: z.coerce.number().int().min(1).max(16_384).optional(),
  /** One embedding request of the worker (ms). */
  EMBEDDING_TIMEOUT_MS: count(10_000),
  /** The query's embedding at search time (ms); past it the search ranks without it and says so. */
  EMBEDDING_QUERY_TIMEOUT_MS: count(1_000),
  /** Recency halves every this many days. */
  MEMORY_SEARCH_HALF_LIFE_DAYS: positive(DEFAULT_SEARCH_SETTINGS.halfLifeDays),
  /** Weights relative to text (1). */
  MEMORY_SEARCH_RECENCY_WEIGHT: nonNegative(DEFAULT_SEARCH_SETTINGS.recencyWeight),
  MEMORY_SEARCH_SEMANTIC_WEIGHT: nonNegative(DEFAULT_SEARCH_SETTINGS.semanticWeight),
  /** Newest entries every search reads (docs/decisions.md, Memory search). */
  MEMORY_SEARCH_WINDOW: count(DEFAULT_SEARCH_SETTINGS.windowSize),
  /** Older matches the index phase may read before a search is bounded to its window. */
  MEMORY_SEARCH_OLDER_LIMIT: count(DEFAULT_SEARCH_SETTINGS.olderLimit),
};

export type MemoryEnv = z.infer<z.ZodObject<typeof memoryEnvShape>>;

/** What search and the embed job need, from the parsed variables. */
export interface MemorySettings {
  search: SearchSettings;
  /** Null without EMBEDDING_BASE_URL. */
  embedder: Embedder | null;
  queryTimeoutMs: number;
}

export function memorySettings(env: MemoryEnv): MemorySettings {
  return {
    search: searchSettings({
      halfLifeDays: env.MEMORY_SEARCH_HALF_LIFE_DAYS,
      recencyWeight: env.MEMORY_SEARCH_RECENCY_WEIGHT,
      semanticWeight: env.MEMORY_SEARCH_SEMANTIC_WEIGHT,
      windowSize: env.MEMORY_SEARCH_WINDOW,
      olderLimit: env.MEMORY_SEARCH_OLDER_LIMIT,
    }),
    embedder: env.EMBEDDING_BASE_URL
      ? createEmbedder({
          baseUrl: env.EMBEDDING_BASE_URL,
          model: env.EMBEDDING_MODEL,
          ...(env.EMBEDDING_API_KEY ? { apiKey: env.EMBEDDING_API_KEY } : {}),
          ...(env.EMBEDDING_DIMENSIONS ? { dimensions: env.EMBEDDING_DIMENSIONS } : {}),
          timeoutMs: env.EMBEDDING_TIMEOUT_MS,
        })
      : null,
    queryTimeoutMs: env.EMBEDDING_QUERY_TIMEOUT_MS,
  };
}
