import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils.js';
import { z } from 'zod';
import { hasLoneSurrogate, hasNul } from './storable-text.js';

// MCP edge shapes: ../shared/spec/mcp-edge.md and the MCP part of decisions.md.
// The seed's stand-in prefix `pub` is `pkgreg` throughout.

export const MCP_PROTOCOL_VERSION = '2025-11-25';
/** Versions the edge negotiates, newest first (MCP lifecycle: the server answers with one it supports). */
export const SUPPORTED_PROTOCOL_VERSIONS = ['2025-11-25', '2025-06-18', '2025-03-26'] as const;
/**
 * The stateless revision served beside them on the same endpoint (docs/decisions.md, "MCP 2026-07-28"):
 * no initialize, each request names its version and capabilities in `_meta`.
 */
export const MCP_MODERN_PROTOCOL_VERSION = '2026-07-28';
/** The revisions one /mcp endpoint serves, as system info lists them. */
export const SERVED_PROTOCOL_REVISIONS = [MCP_PROTOCOL_VERSION, MCP_MODERN_PROTOCOL_VERSION] as const;

/** The `_meta` keys of MCP 2026-07-28 (basic/index: the per-request envelope, the result's server). */
export const MCP_META = {
  protocolVersion: 'io.modelcontextprotocol/protocolVersion',
  clientCapabilities: 'io.modelcontextprotocol/clientCapabilities',
  clientInfo: 'io.modelcontextprotocol/clientInfo',
  serverInfo: 'io.modelcontextprotocol/serverInfo',
} as const;
/** Extension identifiers (capabilities.extensions keys). */
export const MCP_EXTENSIONS = {
  tasks: 'io.modelcontextprotocol/tasks',
  skills: 'io.modelcontextprotocol/skills',
} as const;

export const NAMESPACE_PATTERN = /^app:[0-9a-f]{64}$/;
/** `app:` + 64 lowercase hex chars, derived from the validated client identity. */
export const NamespaceSchema = z
  .string()
  .regex(NAMESPACE_PATTERN, { error: 'namespace must be app: + 64 hex' });

/**
 * A client's memory namespace: `app:` + sha256 hex of `<issuer>|<client_id or sub>` (decisions.md). The
 * edge gives it to a verified token; tests and operators derive the same one. Pure (no node:crypto),
 * so every app and the browser can import contracts.
 */
export function deriveNamespace(issuer: string, clientOrSubject: string): string {
  return `app:${bytesToHex(sha256(utf8ToBytes(`${issuer}|${clientOrSubject}`)))}`;
}

/**
 * The namespace of a token a person delegates to a client (authorization code flow): `app:` + sha256 hex
 * of `<issuer>|<client_id>|<sub>` (decisions.md), so each app a person connects keeps its own memory and
 * two people using one app never share it. Account ids hold no `|`, so the last `|` splits the client
 * from the person.
 */
export function deriveDelegatedNamespace(issuer: string, clientId: string, subject: string): string {
  return deriveNamespace(issuer, `${clientId}|${subject}`);
}

export const SCOPES = {
  systemRead: 'pkgreg.system.read',
  agentsInvoke: 'pkgreg.agents.invoke',
  stmRead: 'pkgreg.memory.stm.read',
  stmWrite: 'pkgreg.memory.stm.write',
  stmDelete: 'pkgreg.memory.stm.delete',
  ltmRead: 'pkgreg.memory.ltm.read',
  ltmWrite: 'pkgreg.memory.ltm.write',
  ltmDelete: 'pkgreg.memory.ltm.delete',
  /** The registry's catalog over MCP: skill:// resources and the registry tools. */
  registryRead: 'pkgreg.registry.read',
} as const;
export const ALL_SCOPES = Object.values(SCOPES);
export const ScopeSchema = z.enum(ALL_SCOPES as [string, ...string[]]);
export type Scope = (typeof SCOPES)[keyof typeof SCOPES];

/** What each scope lets an app do, in plain words: the consent page lists these, never the raw names. */
export const SCOPE_DESCRIPTIONS: Readonly<Record<Scope, string>> = {
  [SCOPES.systemRead]: 'See the service status and your usage limits',
  [SCOPES.agentsInvoke]: 'Run agents on your behalf',
  [SCOPES.stmRead]: "Read this app's short-term memory",
  [SCOPES.stmWrite]: "Add to this app's short-term memory",
  [SCOPES.stmDelete]: "Delete from this app's short-term memory",
  [SCOPES.ltmRead]: "Read this app's long-term memory",
  [SCOPES.ltmWrite]: "Add to this app's long-term memory",
  [SCOPES.ltmDelete]: "Delete from this app's long-term memory",
  [SCOPES.registryRead]: 'Read skills in the registry, your private ones included',
};

export const MemoryTierSchema = z.enum(['stm', 'ltm']);
export type MemoryTier = z.infer<typeof MemoryTierSchema>;

/** The memory-tier scope for an action (decisions.md: `pkgreg.memory.{stm,ltm}.{read,write,delete}`). */
export function memoryScope(tier: MemoryTier, action: 'read' | 'write' | 'delete'): string {
  return `pkgreg.memory.${tier}.${action}`;
}

/** Tiers a caller holding `scopes` may read: memory.search without `tiers` searches these (decisions.md). */
export function readableTiers(scopes: ReadonlySet<string>): MemoryTier[] {
  return MemoryTierSchema.options.filter((t) => scopes.has(memoryScope(t, 'read')));
}

export const TOOL_NAMES = {
  memoryPut: 'pkgreg.memory.v1.put',
  memoryGet: 'pkgreg.memory.v1.get',
  memorySearch: 'pkgreg.memory.v1.search',
  memoryDelete: 'pkgreg.memory.v1.delete',
  memoryCompact: 'pkgreg.memory.v1.compact',
  agentsList: 'pkgreg.agents.v1.list',
  agentsInvoke: 'pkgreg.agents.v1.invoke',
  systemInfo: 'pkgreg.system.v1.info',
  registrySearch: 'pkgreg.registry.v1.search',
  registryGet: 'pkgreg.registry.v1.get',
} as const;
export type ToolName = (typeof TOOL_NAMES)[keyof typeof TOOL_NAMES];

// ---- Limits (decisions.md; also reported by system info) ----

export const MEMORY_LIMITS = {
  maxContentBytes: 16384,
  maxTags: 32,
  maxTagLength: 64,
  maxMetadataKeys: 32,
  maxMetadataValueLength: 1024,
  maxSearchTopK: 50,
  defaultSearchTopK: 10,
  maxCompactEntries: 200,
  defaultCompactEntries: 50,
} as const;
export const MAX_INVOKE_INPUT_BYTES = 8192;
export const IDEMPOTENCY_KEY_MAX_LENGTH = 200;

const utf8Bytes = (s: string) => new TextEncoder().encode(s).length;

/**
 * Every string the edge stores is refused up front, as a schema error, when Postgres could not store it
 * (storable-text.ts), instead of failing in the database (a 500) or being changed silently.
 */
const NO_NUL = { error: 'must not contain the character U+0000' } as const;
const WELL_FORMED = { error: 'must not contain a lone surrogate (U+D800 to U+DFFF)' } as const;
const hasNoNul = (s: string) => !hasNul(s);
const isWellFormed = (s: string) => !hasLoneSurrogate(s);
/** Why a string cannot be stored, or undefined. */
const unstorable = (s: string) =>
  !hasNoNul(s) ? NO_NUL.error : !isWellFormed(s) ? WELL_FORMED.error : undefined;
/** A string the database can store. */
const storableString = () => z.string().refine(hasNoNul, NO_NUL).refine(isWellFormed, WELL_FORMED);

/** How deep an agent's `json` input may nest (objects and arrays). */
export const MAX_INPUT_JSON_DEPTH = 64;

/**
 * Why a JSON value cannot be stored as agent input: it nests deeper than MAX_INPUT_JSON_DEPTH, or a
 * string or key in it cannot be stored (see `unstorable`); undefined when it can. Iterative, so no input exhausts the stack (64 KiB of
 * `[` nests 32k deep, which recursion here, and JSON.stringify, fail on).
 */
function jsonInputProblem(value: unknown): string | undefined {
  const pending: Array<[value: unknown, depth: number]> = [[value, 0]];
  for (let next = pending.pop(); next; next = pending.pop()) {
    const [v, depth] = next;
    if (typeof v === 'string') {
      const problem = unstorable(v);
      if (problem) return problem;
    } else if (v !== null && typeof v === 'object') {
      if (depth >= MAX_INPUT_JSON_DEPTH) return `must not nest deeper than ${MAX_INPUT_JSON_DEPTH} levels`;
      for (const [key, child] of Object.entries(v)) {
        const problem = unstorable(key);
        if (problem) return `keys ${problem}`;
        pending.push([child, depth + 1]);
      }
    }
  }
  return undefined;
}

export const IdempotencyKeySchema = storableString().min(1).max(IDEMPOTENCY_KEY_MAX_LENGTH);

export const MemoryTagsSchema = z
  .array(storableString().min(1).max(MEMORY_LIMITS.maxTagLength))
  .max(MEMORY_LIMITS.maxTags);

// zod's record drops a `__proto__` key (JSON.parse makes it an own property) without a word, which would
// store the entry without it: it is refused instead, before the record is parsed.
const withoutProtoKey = (value: unknown, ctx: { issues: z.core.$ZodRawIssue[] }) => {
  if (value !== null && typeof value === 'object' && Object.hasOwn(value, '__proto__')) {
    ctx.issues.push({ code: 'custom', message: 'keys must not be "__proto__"', input: value });
  }
  return value;
};

export const MemoryMetadataSchema = z.preprocess(
  withoutProtoKey,
  z
    .record(z.string().min(1).max(128), storableString().max(MEMORY_LIMITS.maxMetadataValueLength))
    // Keys checked here, not by the key schema: zod reports a refused record key only as "Invalid key".
    .refine((m) => Object.keys(m).every(hasNoNul), { error: `keys ${NO_NUL.error}` })
    .refine((m) => Object.keys(m).every(isWellFormed), { error: `keys ${WELL_FORMED.error}` })
    .refine((m) => Object.keys(m).length <= MEMORY_LIMITS.maxMetadataKeys, {
      error: `metadata may have at most ${MEMORY_LIMITS.maxMetadataKeys} keys`,
    }),
);

export const MemoryContentSchema = storableString()
  .min(1)
  .refine((s) => utf8Bytes(s) <= MEMORY_LIMITS.maxContentBytes, {
    error: `content must be at most ${MEMORY_LIMITS.maxContentBytes} bytes`,
  });

// ---- Memory entry (decisions.md) ----

export const MemoryEntryStatusSchema = z.enum(['active', 'superseded', 'deleted']);

export const MemoryEntrySchema = z.object({
  entryId: z.uuid(),
  namespace: NamespaceSchema,
  tier: MemoryTierSchema,
  content: z.string(),
  tags: z.array(z.string()),
  metadata: z.record(z.string(), z.string()),
  /** `active`, `superseded` (replaced by a newer entry) or `deleted` (soft-deleted). */
  status: MemoryEntryStatusSchema,
  supersedesEntryId: z.uuid().nullable(),
  supersededByEntryId: z.uuid().nullable(),
  createdAt: z.iso.datetime({ offset: true }),
  updatedAt: z.iso.datetime({ offset: true }),
  deletedAt: z.iso.datetime({ offset: true }).nullable(),
});
export type MemoryEntry = z.infer<typeof MemoryEntrySchema>;

// ---- Tool arguments and results ----

export const MemoryPutArgsSchema = z
  .object({
    namespace: NamespaceSchema,
    tier: MemoryTierSchema,
    content: MemoryContentSchema,
    /** `append` (default) adds an entry; `supersede` replaces `supersedesEntryId`. */
    mode: z.enum(['append', 'supersede']).default('append'),
    supersedesEntryId: z.uuid().optional(),
    tags: MemoryTagsSchema.default([]),
    metadata: MemoryMetadataSchema.default({}),
    /** Replay key for safe retries (24 h, per subject and tool). */
    idempotencyKey: IdempotencyKeySchema.optional(),
  })
  .strict()
  .refine((a) => (a.mode === 'supersede') === (a.supersedesEntryId !== undefined), {
    error: 'supersedesEntryId is required with mode supersede and only allowed with it',
    path: ['supersedesEntryId'],
  });
export type MemoryPutArgs = z.infer<typeof MemoryPutArgsSchema>;

export const MemoryPutResultSchema = z.object({
  entry: MemoryEntrySchema,
  /** The predecessor now marked superseded, when mode was supersede. */
  supersededEntryId: z.uuid().nullable(),
});
export type MemoryPutResult = z.infer<typeof MemoryPutResultSchema>;

export const MemoryGetArgsSchema = z.object({ namespace: NamespaceSchema, entryId: z.uuid() }).strict();
export type MemoryGetArgs = z.infer<typeof MemoryGetArgsSchema>;

export const MemoryGetResultSchema = z.object({ entry: MemoryEntrySchema });
export type MemoryGetResult = z.infer<typeof MemoryGetResultSchema>;

export const MemorySearchArgsSchema = z
  .object({
    namespace: NamespaceSchema,
    query: z.string().max(1024),
    /** Tiers to search; defaults to every tier the caller may read. */
    tiers: z.array(MemoryTierSchema).min(1).optional(),
    /** Only entries carrying all of these tags. */
    tags: MemoryTagsSchema.optional(),
    topK: z.number().int().min(1).max(MEMORY_LIMITS.maxSearchTopK).default(MEMORY_LIMITS.defaultSearchTopK),
  })
  .strict();
export type MemorySearchArgs = z.infer<typeof MemorySearchArgsSchema>;

/** Why a search ranked an entry where it did: each part in [0, 1]; `score` is their weighted sum. */
export const MemoryScorePartsSchema = z.object({
  /**
   * The share of the query's terms the entry matches: a term in its content counts 1, a term only in its
   * tags 0.5, divided by the number of terms (English stop words are not terms). 0 for a blank query.
   */
  text: z.number().min(0).max(1),
  /** 2^(-age / half-life) of the entry's creation: 1 when just written, 0.5 one half-life later. */
  recency: z.number().min(0).max(1),
  /**
   * Cosine similarity (below 0 counted as 0) of the entry's and the query's embeddings, when semantic
   * ranking was used and the entry has an embedding (else absent, counted as 0).
   */
  semantic: z.number().min(0).max(1).optional(),
});
export type MemoryScoreParts = z.infer<typeof MemoryScorePartsSchema>;

/** How a search ranked its results (docs/decisions.md, Memory search). */
export const MemorySearchRankingSchema = z.object({
  /** The weight of each part in `score` (they sum to 1); `semantic` only when it was used. */
  weights: z.object({ text: z.number(), recency: z.number(), semantic: z.number().optional() }),
  /** Recency half-life in days. */
  halfLifeDays: z.number().positive(),
  /** The results are exactly the top `topK` of ranking every match by this score (else bounded work). */
  exact: z.boolean(),
  /** `total` is the number of every match (else a lower bound: the matches the bounded search read). */
  totalExact: z.boolean(),
  /**
   * `off`: no embedding endpoint configured; `used`: blended in; `unavailable`: configured, but the
   * query's embedding failed (`semanticError`), so results are ranked by text and recency only.
   */
  semantic: z.enum(['off', 'used', 'unavailable']),
  semanticError: z.enum(['timeout', 'http_error', 'network_error', 'bad_answer']).optional(),
});
export type MemorySearchRanking = z.infer<typeof MemorySearchRankingSchema>;

export const MemorySearchResultSchema = z.object({
  results: z.array(
    z.object({
      entry: MemoryEntrySchema,
      score: z.number(),
      /** Added after v1's first release: absent from runtimes that predate it. */
      scoreParts: MemoryScorePartsSchema.optional(),
    }),
  ),
  /** Matching active entries: exact when `ranking.totalExact`, else a lower bound. */
  total: z.number().int().nonnegative(),
  /** Added after v1's first release: absent from runtimes that predate it. */
  ranking: MemorySearchRankingSchema.optional(),
});
export type MemorySearchResult = z.infer<typeof MemorySearchResultSchema>;

export const MemoryDeleteArgsSchema = z
  .object({ namespace: NamespaceSchema, entryId: z.uuid(), idempotencyKey: IdempotencyKeySchema.optional() })
  .strict();
export type MemoryDeleteArgs = z.infer<typeof MemoryDeleteArgsSchema>;

export const MemoryDeleteResultSchema = z.object({ entry: MemoryEntrySchema });
export type MemoryDeleteResult = z.infer<typeof MemoryDeleteResultSchema>;

export const ExecutionModeSchema = z.enum(['async', 'sync']);

export const CompactStrategySchema = z.enum(['summarize', 'extract_facts']);
export type CompactStrategy = z.infer<typeof CompactStrategySchema>;

export const MemoryCompactArgsSchema = z
  .object({
    namespace: NamespaceSchema,
    sourceTier: z.literal('stm').default('stm'),
    strategy: CompactStrategySchema,
    /** How many stm entries (oldest first) the window holds. */
    maxEntries: z
      .number()
      .int()
      .min(1)
      .max(MEMORY_LIMITS.maxCompactEntries)
      .default(MEMORY_LIMITS.defaultCompactEntries),
    executionMode: ExecutionModeSchema.default('sync'),
    idempotencyKey: IdempotencyKeySchema.optional(),
  })
  .strict();
export type MemoryCompactArgs = z.infer<typeof MemoryCompactArgsSchema>;

export const TaskStatusSchema = z.enum(['queued', 'running', 'completed', 'failed']);
export type TaskStatus = z.infer<typeof TaskStatusSchema>;

export const TaskHandleSchema = z.object({ taskId: z.uuid(), status: TaskStatusSchema, runId: z.uuid() });
export type TaskHandle = z.infer<typeof TaskHandleSchema>;

export const TaskAcceptedResultSchema = z.object({ mode: z.literal('task'), task: TaskHandleSchema });
export type TaskAcceptedResult = z.infer<typeof TaskAcceptedResultSchema>;

export const CompactOutcomeSchema = z.object({
  strategy: CompactStrategySchema,
  /** stm entries the window held. */
  sourceEntryIds: z.array(z.uuid()),
  /** Entries written: one stm summary, or the new ltm facts. */
  createdEntries: z.array(MemoryEntrySchema),
});
export type CompactOutcome = z.infer<typeof CompactOutcomeSchema>;

export const MemoryCompactResultSchema = z.discriminatedUnion('mode', [
  TaskAcceptedResultSchema,
  CompactOutcomeSchema.extend({ mode: z.literal('completed'), runId: z.uuid() }),
]);
export type MemoryCompactResult = z.infer<typeof MemoryCompactResultSchema>;

// ---- Agents ----

export const InputModeSchema = z.enum(['text', 'packet', 'json']);

export const AgentCatalogEntrySchema = z.object({
  agentId: z.string(),
  title: z.string(),
  description: z.string(),
  inputModes: z.array(InputModeSchema),
  memoryBinding: z.object({
    supported: z.boolean(),
    readTiers: z.array(MemoryTierSchema),
    writeTiers: z.array(MemoryTierSchema),
  }),
  execution: z.object({
    taskSupport: z.enum(['none', 'optional']),
    asyncThreshold: z.string(),
  }),
});
export type AgentCatalogEntry = z.infer<typeof AgentCatalogEntrySchema>;

export const AgentsListArgsSchema = z.object({}).strict();
export const AgentsListResultSchema = z.object({ agents: z.array(AgentCatalogEntrySchema) });
export type AgentsListResult = z.infer<typeof AgentsListResultSchema>;

export const AgentInputSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('text'), text: storableString().min(1) }).strict(),
  z
    .object({
      type: z.literal('json'),
      json: z.unknown().superRefine((v, ctx) => {
        const problem = jsonInputProblem(v);
        if (problem) ctx.addIssue({ code: 'custom', message: problem });
      }),
    })
    .strict(),
  z
    .object({
      type: z.literal('packet'),
      packet: z
        .object({
          goal: storableString().min(1),
          constraints: z.array(storableString()).optional(),
          context: storableString().optional(),
        })
        .strict(),
    })
    .strict(),
]);
export type AgentInput = z.infer<typeof AgentInputSchema>;

export const MemoryBindingSchema = z
  .object({
    namespace: NamespaceSchema,
    readTiers: z.array(MemoryTierSchema).default([]),
    writeTiers: z.array(MemoryTierSchema).default([]),
  })
  .strict();
export type MemoryBinding = z.infer<typeof MemoryBindingSchema>;

/** Scopes an invoke needs (decisions.md): pkgreg.agents.invoke plus its memory binding's tier scopes. */
export function invokeScopes(memory: Pick<MemoryBinding, 'readTiers' | 'writeTiers'> | undefined): string[] {
  return [
    SCOPES.agentsInvoke,
    ...[...new Set(memory?.readTiers ?? [])].map((t) => memoryScope(t, 'read')),
    ...[...new Set(memory?.writeTiers ?? [])].map((t) => memoryScope(t, 'write')),
  ];
}

/** Scopes a compaction needs (decisions.md): stm read, and the write scope of the tier it writes. */
export function compactScopes(strategy: CompactStrategy): string[] {
  return strategy === 'summarize' ? [SCOPES.stmRead, SCOPES.stmWrite] : [SCOPES.stmRead, SCOPES.ltmWrite];
}

export const AgentsInvokeArgsSchema = z
  .object({
    agentId: z.string().min(1).max(128),
    input: AgentInputSchema.refine(
      (i) => {
        try {
          return utf8Bytes(JSON.stringify(i)) <= MAX_INVOKE_INPUT_BYTES;
        } catch {
          // zod runs this even when the json part was refused: nested too deep, JSON.stringify overflows
          // the stack, and that refusal is the one to report.
          return true;
        }
      },
      { error: `input must be at most ${MAX_INVOKE_INPUT_BYTES} bytes serialized` },
    ),
    memory: MemoryBindingSchema.optional(),
    /** Defaults to `sync` (decisions.md). */
    executionMode: ExecutionModeSchema.default('sync'),
    idempotencyKey: IdempotencyKeySchema.optional(),
  })
  .strict();
export type AgentsInvokeArgs = z.infer<typeof AgentsInvokeArgsSchema>;

export const OutputItemSchema = z.object({ type: z.literal('text'), text: z.string() });
export type OutputItem = z.infer<typeof OutputItemSchema>;

export const AgentsInvokeResultSchema = z.discriminatedUnion('mode', [
  TaskAcceptedResultSchema,
  z.object({ mode: z.literal('completed'), runId: z.uuid(), outputs: z.array(OutputItemSchema) }),
]);
export type AgentsInvokeResult = z.infer<typeof AgentsInvokeResultSchema>;

// ---- System info ----

export const BackendModeSchema = z.enum(['development', 'local_tunnel', 'hosted']);
export type BackendMode = z.infer<typeof BackendModeSchema>;

export const SystemInfoArgsSchema = z.object({}).strict();

export const SystemInfoResultSchema = z.object({
  server: z.object({
    name: z.string(),
    phase: z.string().regex(/^phase-\d+$/),
    backendMode: BackendModeSchema,
    protocolVersion: z.string(),
    /** Every MCP revision the endpoint answers (added beside the contract's `protocolVersion`). */
    protocolVersions: z.array(z.string()).optional(),
  }),
  features: z.object({
    publicAgents: z.boolean(),
    publicSystemInfo: z.boolean(),
    publicTasks: z.boolean(),
    publicCompactAsync: z.boolean(),
  }),
  limits: z
    .object({
      maxInvokeInputBytes: z.number().int(),
      maxSearchTopK: z.number().int(),
      maxTaskPollWindowSeconds: z.number().int(),
    })
    .catchall(z.number().int()),
  quotas: z
    .object({ invokePerMinute: z.number().int(), compactPerMinute: z.number().int() })
    .catchall(z.number()),
  tasks: z.object({
    supportedMethods: z.array(z.string()),
    toolSupport: z.record(z.string(), z.literal('optional')),
  }),
  /**
   * Which planner engineering.workflow runs (docs/agent.md): the model tool loop, or the rules (no model
   * configured). Its per-run limits are in `limits.agentMax*`. Added to the contract.
   */
  agent: z
    .object({
      planner: z.enum(['model', 'rules']),
      /** The model's wire protocol; null for the rules. */
      provider: z.enum(['openai', 'anthropic']).nullable(),
    })
    .optional(),
});
export type SystemInfoResult = z.infer<typeof SystemInfoResultSchema>;

// ---- Protocol methods ----

export const InitializeParamsSchema = z
  .object({
    protocolVersion: z.string().min(1),
    clientInfo: z.object({ name: z.string(), version: z.string() }).loose(),
    capabilities: z.record(z.string(), z.unknown()).optional(),
  })
  .loose();
export type InitializeParams = z.infer<typeof InitializeParamsSchema>;

export const InitializeResultSchema = z.object({
  protocolVersion: z.string(),
  serverInfo: z.object({ name: z.string(), version: z.string() }),
  capabilities: z.object({
    tools: z.object({ listChanged: z.literal(false) }),
    /** skill:// resources (issue 20): no subscriptions, no list-changed notifications (stateless). */
    resources: z.object({ subscribe: z.literal(false), listChanged: z.literal(false) }),
    tasks: z.record(z.string(), z.unknown()),
  }),
  instructions: z.string().optional(),
});
export type InitializeResult = z.infer<typeof InitializeResultSchema>;

export const ToolDescriptorSchema = z.object({
  name: z.string(),
  version: z.string(),
  description: z.string(),
  capabilities: z.array(z.string()),
  permissionScope: z.string(),
  /** JSON Schema 2020-12 of the arguments. */
  inputSchema: z.record(z.string(), z.unknown()),
  /** JSON Schema 2020-12 of the tool-specific result. */
  outputSchema: z.record(z.string(), z.unknown()),
  /** MCP tool execution hints: whether the tool can run as a task. */
  execution: z.object({ taskSupport: z.enum(['forbidden', 'optional', 'required']) }).optional(),
});
export type ToolDescriptor = z.infer<typeof ToolDescriptorSchema>;

export const ToolsListResultSchema = z.object({ tools: z.array(ToolDescriptorSchema) });
export type ToolsListResult = z.infer<typeof ToolsListResultSchema>;

export const ToolsCallParamsSchema = z
  .object({ name: z.string().min(1), arguments: z.record(z.string(), z.unknown()).default({}) })
  .loose();
export type ToolsCallParams = z.infer<typeof ToolsCallParamsSchema>;

export const TaskIdParamsSchema = z.object({ taskId: z.uuid() }).loose();
export type TaskIdParams = z.infer<typeof TaskIdParamsSchema>;

/** The longest `statusMessage` a task record carries (characters). */
export const TASK_STATUS_MESSAGE_MAX_LENGTH = 300;

export const TaskRecordSchema = z.object({
  taskId: z.uuid(),
  toolName: z.string(),
  subjectNamespace: NamespaceSchema,
  canonicalRunId: z.uuid(),
  status: TaskStatusSchema,
  submittedAt: z.iso.datetime({ offset: true }),
  updatedAt: z.iso.datetime({ offset: true }),
  /**
   * What a running task is doing now (`step 3/8: reading @acme/go-rest-api SKILL.md`), MCP's Task
   * `statusMessage`. Absent before the run reports a step and once the task has ended: its result or
   * error says how it went.
   */
  statusMessage: z.string().max(TASK_STATUS_MESSAGE_MAX_LENGTH).optional(),
});
export type TaskRecord = z.infer<typeof TaskRecordSchema>;

export const TaskErrorSchema = z.object({ reason: z.string(), message: z.string() });

export const TasksResultResultSchema = z.discriminatedUnion('status', [
  z.object({
    taskId: z.uuid(),
    status: z.literal('completed'),
    result: z.object({ runId: z.uuid(), outputs: z.array(OutputItemSchema) }).loose(),
  }),
  z.object({ taskId: z.uuid(), status: z.literal('failed'), error: TaskErrorSchema }),
]);
export type TasksResultResult = z.infer<typeof TasksResultResultSchema>;
