import type { ModelConfig } from '@pkgreg/agents';
import { agentLimitsEnvShape } from '@pkgreg/contracts';
import { indexerEnvShape } from '@pkgreg/indexer';
import { memoryEnvShape } from '@pkgreg/memory';
import { booleanFlag, commonEnvShape, metricsEnvShape, parseEnv } from '@pkgreg/server-kit';
import { z } from 'zod';

// The only place runtime-worker reads process.env: settings are parsed once at start, so a bad value
// stops the process before it takes a job.
export const EnvSchema = z.object({
  ...commonEnvShape,
  /** Jobs one worker process runs at once on the runtime queue. */
  WORKER_CONCURRENCY: z.coerce.number().int().min(1).max(500).default(10),
  /** Jobs one worker process runs at once on the indexing queue. */
  INDEXING_CONCURRENCY: z.coerce.number().int().min(1).max(50).default(2),
  /** Key prefix of the BullMQ queues. A hosted tenant's worker uses the edge's `<prefix>:tenant:<tenant>`. */
  QUEUE_PREFIX: z.string().default('pkgreg'),
  /** Postgres schema first on the search_path: a hosted tenant's worker uses `tenant_<tenant>`. */
  DATABASE_SCHEMA: z
    .string()
    .regex(/^[a-z_][a-z0-9_]{0,62}$/)
    .optional(),
  /** Consume the indexing queue in this process (off for runtime-only workers). */
  INDEXING_ENABLED: booleanFlag(true),
  /** How often every known source is re-indexed (ms); 0 disables the schedule. Default 6 h. */
  REINDEX_EVERY_MS: z.coerce
    .number()
    .int()
    .min(0)
    .default(6 * 3600 * 1000),
  /** How often blobs no version references are deleted (ms); 0 disables the schedule. Default 24 h. */
  GC_BLOBS_EVERY_MS: z.coerce
    .number()
    .int()
    .min(0)
    .default(24 * 3600 * 1000),
  /** How often ended tasks past their poll window are purged and orphaned tasks failed (ms). */
  PURGE_EVERY_MS: z.coerce
    .number()
    .int()
    .min(1000)
    .default(5 * 60 * 1000),
  /** mcp-edge.md Limits: maxTaskPollWindowSeconds; a task is purged this long after it ends. */
  TASK_POLL_WINDOW_SECONDS: z.coerce.number().int().min(1).default(300),
  /** An open task untouched this long with no live job is failed as lost. */
  ORPHAN_AFTER_SECONDS: z.coerce.number().int().min(10).default(900),
  /** BullMQ lock of a running job; a dead worker's job is recovered after it expires (ms). */
  LOCK_DURATION_MS: z.coerce.number().int().min(500).default(30_000),
  /** How often a worker looks for stalled jobs (ms). */
  STALLED_INTERVAL_MS: z.coerce.number().int().min(200).default(30_000),
  /** How many times a job may stall (its worker died) before it fails. */
  MAX_STALLED_COUNT: z.coerce.number().int().min(0).max(10).default(2),
  /**
   * How often one attempt of a job may wait (a second each time) for a PostgreSQL or Redis outage to
   * end before the error uses the attempt; bounds a job whose error only looks like an outage.
   */
  OUTAGE_MAX_DEFERRALS: z.coerce.number().int().min(0).default(180),
  /** Port of `/healthz` and `/readyz` for an orchestrator's probes; unset serves none. */
  WORKER_HEALTH_PORT: z.preprocess(
    (v) => (v === '' ? undefined : v),
    z.coerce.number().int().min(1).max(65535).optional(),
  ),
  WORKER_HEALTH_HOST: z.string().default('127.0.0.1'),
  /** Operator listener for Prometheus (`GET /metrics`): a port, `0` for any free one, or `off`. */
  ...metricsEnvShape(9466),
  /** Longest wait on SIGTERM for running jobs to finish before they are left to stalled recovery. */
  SHUTDOWN_GRACE_MS: z.coerce.number().int().min(0).default(25_000),
  /** Registry API origin the planner searches (GET /api/search). */
  REGISTRY_URL: z.url().default('http://127.0.0.1:4000'),
  REGISTRY_TIMEOUT_MS: z.coerce.number().int().min(100).default(3000),
  /**
   * The MCP edge's public base URL, as the edge's own PKGREG_PUBLIC_BASE_URL: `<it>/mcp` is the issuer of
   * the delegation assertions the worker signs to read the registry as the person an agent.invoke job
   * names (docs/agent.md, "Privacy"), and of the namespaces such jobs belong to.
   */
  PKGREG_PUBLIC_BASE_URL: z
    .url()
    .default('http://localhost:4100')
    .transform((u) => u.replace(/\/+$/, '')),
  /** The registry's public URL, as its own REGISTRY_PUBLIC_URL: those assertions' audience. REGISTRY_URL when unset. */
  REGISTRY_PUBLIC_URL: z
    .url()
    .optional()
    .transform((u) => u?.replace(/\/+$/, '')),
  /**
   * The model endpoint's base: OpenAI chat completions (…/v1: a hosted provider, Ollama, vLLM,
   * llama.cpp) or, with MODEL_PROVIDER=anthropic, the Messages API's origin (https://api.anthropic.com).
   * Unset runs the rule planner without a model (docs/agent.md).
   */
  MODEL_BASE_URL: z.url().optional(),
  /** Which wire protocol MODEL_BASE_URL speaks. */
  MODEL_PROVIDER: z.enum(['openai', 'anthropic']).default('openai'),
  MODEL_NAME: z.string().min(1).default('gpt-4o-mini'),
  /** Key for the model endpoint. Never logged, never in job data. */
  MODEL_API_KEY: z.string().optional(),
  /** One model call's timeout (ms); a call that times out is retried within AGENT_MAX_RETRIES. */
  MODEL_TIMEOUT_MS: z.coerce.number().int().min(100).default(8000),
  /**
   * Run the model as a tool loop over the registry's skills (on), or only let it reword the rule
   * planner's titles (off, the earlier behaviour).
   */
  AGENT_TOOL_LOOP: booleanFlag(true),
  /** Limits of one model run (docs/agent.md, "Limits"); the system info shows them. */
  ...agentLimitsEnvShape,
  // Code host settings (GitHub Enterprise: your hosts) and limits for the indexer.
  ...indexerEnvShape,
  // Embeddings of memory entries (memory.embed jobs) and memory search's settings.
  ...memoryEnvShape,
});
export type Env = z.infer<typeof EnvSchema>;

export function loadEnv(source: Record<string, string | undefined> = process.env): Env {
  return parseEnv(EnvSchema, source);
}

/** The model configuration, or null for the rule planner alone. */
export function modelConfig(env: Env): ModelConfig | null {
  if (!env.MODEL_BASE_URL) return null;
  return {
    provider: env.MODEL_PROVIDER,
    baseUrl: env.MODEL_BASE_URL,
    model: env.MODEL_NAME,
    ...(env.MODEL_API_KEY ? { apiKey: env.MODEL_API_KEY } : {}),
    timeoutMs: env.MODEL_TIMEOUT_MS,
  };
}

/** Whom the worker's delegation assertions are from and for: the edge's issuer, the registry. */
export function delegationSettings(env: Env): { issuer: string; audience: string } {
  return {
    issuer: `${env.PKGREG_PUBLIC_BASE_URL}/mcp`,
    audience: env.REGISTRY_PUBLIC_URL ?? env.REGISTRY_URL.replace(/\/+$/, ''),
  };
}
