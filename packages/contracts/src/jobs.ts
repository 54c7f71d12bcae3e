import { z } from 'zod';
import { AgentInputSchema, CompactStrategySchema, MemoryBindingSchema, NamespaceSchema } from './mcp.js';

// The job catalog: every job the edge or an operator enqueues and the worker runs, declared once so
// that producers and the worker agree on each job's payload, attempts and backoff.
// Job data never carries a secret or a token: only ids and validated arguments.

export const QUEUES = {
  /** Agent invokes and compactions: latency-sensitive, scaled with runtime workers. */
  runtime: 'pkgreg-runtime',
  /** Registry indexing: slow, rate-limited by the code host. */
  indexing: 'pkgreg-indexing',
} as const;
export type QueueName = (typeof QUEUES)[keyof typeof QUEUES];

export interface JobDefinition<S extends z.ZodType> {
  queue: QueueName;
  schema: S;
  attempts: number;
  backoff: { type: 'exponential' | 'fixed'; delay: number };
}

function job<S extends z.ZodType>(definition: JobDefinition<S>): JobDefinition<S> {
  return definition;
}

/**
 * The person an app acts for and the app, as the edge admitted them: an identity, never a credential.
 * The worker signs its own delegation assertion for them to read the registry as that person
 * (docs/agent.md, "Privacy").
 */
export const AgentDelegationSchema = z
  .object({
    /** The account id (the delegated token's `sub`). */
    subject: z.string().min(1).max(255),
    /** The app (the token's `client_id`; a client id metadata document's URL is one). */
    clientId: z.string().min(1).max(2048),
  })
  .strict();
export type AgentDelegation = z.infer<typeof AgentDelegationSchema>;

export const AgentInvokeJobSchema = z.object({
  taskId: z.uuid(),
  runId: z.uuid(),
  namespace: NamespaceSchema,
  agentId: z.string(),
  input: AgentInputSchema,
  memory: MemoryBindingSchema.optional(),
  /**
   * Set by the edge only for a token its delegation assertions honour (its own issuer's, delegated by a
   * person, with pkgreg.registry.read); absent, the run reads the registry anonymously.
   */
  delegation: AgentDelegationSchema.optional(),
});
export type AgentInvokeJob = z.infer<typeof AgentInvokeJobSchema>;

export const MemoryCompactJobSchema = z.object({
  taskId: z.uuid(),
  runId: z.uuid(),
  namespace: NamespaceSchema,
  sourceTier: z.literal('stm'),
  strategy: CompactStrategySchema,
  maxEntries: z.number().int().min(1),
});
export type MemoryCompactJob = z.infer<typeof MemoryCompactJobSchema>;

/** How many entries one `memory.embed` job embeds (one request to the embedding endpoint). */
export const MAX_EMBED_JOB_ENTRIES = 64;

/**
 * Entries whose embeddings the worker computes and stores (optional semantic search): `entryIds`, or
 * without them the namespace's newest entries that have none (after a compaction or an agent's record).
 * Only ids: the worker reads the content.
 */
export const MemoryEmbedJobSchema = z.object({
  namespace: NamespaceSchema,
  entryIds: z.array(z.uuid()).min(1).max(MAX_EMBED_JOB_ENTRIES).optional(),
});
export type MemoryEmbedJob = z.infer<typeof MemoryEmbedJobSchema>;

export const RegistryIndexJobSchema = z.object({
  /** `owner/repo` for GitHub, an absolute path for a local git repository. */
  locator: z.string().min(1),
  kind: z.enum(['github', 'git']),
  /** Also index SKILL.md files under hidden folders and node_modules (remembered for the source). */
  includeHidden: z.boolean().optional(),
  /**
   * GitHub: the branch to index, remembered for the source; null: the default branch; absent: the one
   * the source remembers.
   */
  ref: z.string().min(1).max(255).nullable().optional(),
  /** How the caller proved control of the repository (a publish); absent for crawls. Never the proof itself. */
  proof: z.enum(['oidc', 'token', 'webhook']).optional(),
  /** The code-host account id the proof named; the repository must still belong to it. */
  ownerId: z.number().int().positive().optional(),
  /**
   * The code host's id of the repository the proof covers: the job reads the repository by this id
   * (a rename is followed) and refuses any other.
   */
  repositoryId: z.number().int().positive().optional(),
  /** The publish run (publish_runs row) this job reports its outcome to. */
  publishRunId: z.uuid().optional(),
});
export type RegistryIndexJob = z.infer<typeof RegistryIndexJobSchema>;

export const RegistryReindexAllJobSchema = z.object({});
export const TasksPurgeJobSchema = z.object({});
export const RegistryGcBlobsJobSchema = z.object({});

export const JOB_CATALOG = {
  'agent.invoke': job({
    queue: QUEUES.runtime,
    schema: AgentInvokeJobSchema,
    attempts: 3,
    backoff: { type: 'exponential', delay: 500 },
  }),
  'memory.compact': job({
    queue: QUEUES.runtime,
    schema: MemoryCompactJobSchema,
    attempts: 3,
    backoff: { type: 'exponential', delay: 500 },
  }),
  'memory.embed': job({
    queue: QUEUES.runtime,
    schema: MemoryEmbedJobSchema,
    attempts: 5,
    backoff: { type: 'exponential', delay: 2_000 },
  }),
  'registry.index': job({
    queue: QUEUES.indexing,
    schema: RegistryIndexJobSchema,
    attempts: 5,
    backoff: { type: 'exponential', delay: 5_000 },
  }),
  'registry.reindex-all': job({
    queue: QUEUES.indexing,
    schema: RegistryReindexAllJobSchema,
    attempts: 1,
    backoff: { type: 'fixed', delay: 0 },
  }),
  // Deletes blobs no version references; skips its turn while an indexing run holds the store.
  'registry.gc-blobs': job({
    queue: QUEUES.indexing,
    schema: RegistryGcBlobsJobSchema,
    attempts: 1,
    backoff: { type: 'fixed', delay: 0 },
  }),
  'tasks.purge-expired': job({
    queue: QUEUES.runtime,
    schema: TasksPurgeJobSchema,
    attempts: 1,
    backoff: { type: 'fixed', delay: 0 },
  }),
} as const;

export type JobName = keyof typeof JOB_CATALOG;
export type JobPayload<N extends JobName> = z.infer<(typeof JOB_CATALOG)[N]['schema']>;
/** A handler for every job: the worker's map must satisfy this or typecheck fails. */
export type JobHandlers<Ctx> = { [N in JobName]: (payload: JobPayload<N>, ctx: Ctx) => Promise<unknown> };
