import {
  AgentsInvokeArgsSchema,
  AgentsInvokeResultSchema,
  AgentsListArgsSchema,
  AgentsListResultSchema,
  compactScopes,
  invokeScopes,
  MemoryCompactArgsSchema,
  MemoryCompactResultSchema,
  MemoryDeleteArgsSchema,
  MemoryDeleteResultSchema,
  MemoryGetArgsSchema,
  MemoryGetResultSchema,
  MemoryPutArgsSchema,
  MemoryPutResultSchema,
  MemorySearchArgsSchema,
  MemorySearchResultSchema,
  type MemoryTier,
  memoryScope,
  RegistryGetArgsSchema,
  RegistryGetResultSchema,
  RegistrySearchArgsSchema,
  RegistrySearchResultSchema,
  readableTiers,
  SCOPES,
  SystemInfoArgsSchema,
  SystemInfoResultSchema,
  TOOL_NAMES,
  type ToolName,
} from '@pkgreg/contracts';
import type { z } from 'zod';
import type { Catalog } from '../catalog/catalog.js';

// The public tool surface (mcp-edge.md, Tools; decisions.md, Memory scopes): each public name maps once
// onto the runtime. What a tool needs (scopes, namespace, quota) is declared here so admission can
// check it before anything runs (admission/admission.ts). What a tool does: runtime/local-runtime.ts,
// or for the tools that read no tenant state (`runtime: false`), mcp/dispatch.ts; the registry tools
// (`registry`) read the catalog (catalog/catalog.ts).

const TIERS: MemoryTier[] = ['stm', 'ltm'];

export interface ToolSpec<A = unknown> {
  name: ToolName;
  description: string;
  args: z.ZodType<A>;
  result: z.ZodType;
  /** MCP `execution.taskSupport`: invoke and compact can run as tasks. */
  taskSupport: 'forbidden' | 'optional';
  /** Whether a caller holding `scopes` may see the tool in tools/list. */
  visibleTo(scopes: ReadonlySet<string>): boolean;
  /** Scopes this particular call needs (args are already validated). */
  requiredScopes(args: A, scopes: ReadonlySet<string>): string[];
  /** The namespace the call touches, checked against the caller's own. */
  namespaceOf(args: A): string | undefined;
  quota?: 'invoke' | 'compact';
  /** Executes in the backend's runtime (forwarded in local_tunnel mode) rather than at the edge. */
  runtime: boolean;
  /**
   * Answered at the edge from the registry's catalog, the same in every backend: with the arguments as
   * the tool's schema returned them, and the delegation assertion of the person the caller acts for
   * (undefined: read anonymously).
   */
  registry?(catalog: Catalog, args: A, assertion: string | undefined): Promise<object>;
}

const anyTier = (scopes: ReadonlySet<string>, action: 'read' | 'write' | 'delete') =>
  TIERS.some((t) => scopes.has(memoryScope(t, action)));

function spec<A>(s: ToolSpec<A>): ToolSpec<A> {
  return s;
}

export const TOOL_SPECS = [
  spec({
    name: TOOL_NAMES.memoryPut,
    description: 'Append one source-local stm/ltm memory entry, or supersede an existing one.',
    args: MemoryPutArgsSchema,
    result: MemoryPutResultSchema,
    taskSupport: 'forbidden',
    visibleTo: (s) => anyTier(s, 'write'),
    requiredScopes: (a) => [memoryScope(a.tier, 'write')],
    namespaceOf: (a) => a.namespace,
    runtime: true,
  }),
  spec({
    name: TOOL_NAMES.memoryGet,
    description: 'Fetch one source-local memory entry by id.',
    args: MemoryGetArgsSchema,
    result: MemoryGetResultSchema,
    taskSupport: 'forbidden',
    visibleTo: (s) => anyTier(s, 'read'),
    // The entry's tier is only known once it is read; the handler then checks that tier's read scope.
    requiredScopes: (_a, s) => (anyTier(s, 'read') ? [] : TIERS.map((t) => memoryScope(t, 'read'))),
    namespaceOf: (a) => a.namespace,
    runtime: true,
  }),
  spec({
    name: TOOL_NAMES.memorySearch,
    description:
      'Search active source-local memory entries, ranked by text match and recency (and meaning, when the ' +
      'deployment has embeddings); each result carries its score parts. Tiers default to those the caller can read.',
    args: MemorySearchArgsSchema,
    result: MemorySearchResultSchema,
    taskSupport: 'forbidden',
    visibleTo: (s) => anyTier(s, 'read'),
    requiredScopes: (a, s) => {
      if (a.tiers) return [...new Set(a.tiers)].map((t) => memoryScope(t, 'read'));
      return readableTiers(s).length ? [] : TIERS.map((t) => memoryScope(t, 'read'));
    },
    namespaceOf: (a) => a.namespace,
    runtime: true,
  }),
  spec({
    name: TOOL_NAMES.memoryDelete,
    description: 'Soft-delete one source-local memory entry.',
    args: MemoryDeleteArgsSchema,
    result: MemoryDeleteResultSchema,
    taskSupport: 'forbidden',
    visibleTo: (s) => anyTier(s, 'delete'),
    // As with get: the handler checks the delete scope of the entry's own tier.
    requiredScopes: (_a, s) => (anyTier(s, 'delete') ? [] : TIERS.map((t) => memoryScope(t, 'delete'))),
    namespaceOf: (a) => a.namespace,
    runtime: true,
  }),
  spec({
    name: TOOL_NAMES.memoryCompact,
    description:
      'External-only compaction of the stm window: summarize (into stm) or extract_facts (into ltm).',
    args: MemoryCompactArgsSchema,
    result: MemoryCompactResultSchema,
    taskSupport: 'optional',
    visibleTo: (s) => s.has(SCOPES.stmRead) && (s.has(SCOPES.stmWrite) || s.has(SCOPES.ltmWrite)),
    requiredScopes: (a) => compactScopes(a.strategy),
    namespaceOf: (a) => a.namespace,
    quota: 'compact',
    runtime: true,
  }),
  spec({
    name: TOOL_NAMES.agentsList,
    description: 'Discover the public-safe agent catalog.',
    args: AgentsListArgsSchema,
    result: AgentsListResultSchema,
    taskSupport: 'forbidden',
    visibleTo: (s) => s.has(SCOPES.systemRead),
    requiredScopes: () => [SCOPES.systemRead],
    namespaceOf: () => undefined,
    runtime: false,
  }),
  spec({
    name: TOOL_NAMES.agentsInvoke,
    description: 'Invoke an approved public agent, optionally bound to source-local memory tiers.',
    args: AgentsInvokeArgsSchema,
    result: AgentsInvokeResultSchema,
    taskSupport: 'optional',
    visibleTo: (s) => s.has(SCOPES.agentsInvoke),
    requiredScopes: (a) => invokeScopes(a.memory),
    namespaceOf: (a) => a.memory?.namespace,
    quota: 'invoke',
    runtime: true,
  }),
  spec({
    name: TOOL_NAMES.systemInfo,
    description: 'Read public-safe runtime metadata: backend mode, limits, quotas and task support.',
    args: SystemInfoArgsSchema,
    result: SystemInfoResultSchema,
    taskSupport: 'forbidden',
    visibleTo: (s) => s.has(SCOPES.systemRead),
    requiredScopes: () => [SCOPES.systemRead],
    namespaceOf: () => undefined,
    runtime: false,
  }),
  spec({
    name: TOOL_NAMES.registrySearch,
    description:
      "Search the registry's skills by words in their scope, name and description (each word a prefix); results carry the skill:// URIs to read them by.",
    args: RegistrySearchArgsSchema,
    result: RegistrySearchResultSchema,
    taskSupport: 'forbidden',
    visibleTo: (s) => s.has(SCOPES.registryRead),
    requiredScopes: () => [SCOPES.registryRead],
    namespaceOf: () => undefined,
    runtime: false,
    registry: (catalog, a, assertion) => catalog.search(a, assertion),
  }),
  spec({
    name: TOOL_NAMES.registryGet,
    description:
      "One registry package's detail by @scope/name, with the skill:// URIs of its SKILL.md and file manifest.",
    args: RegistryGetArgsSchema,
    result: RegistryGetResultSchema,
    taskSupport: 'forbidden',
    visibleTo: (s) => s.has(SCOPES.registryRead),
    requiredScopes: () => [SCOPES.registryRead],
    namespaceOf: () => undefined,
    runtime: false,
    registry: (catalog, a, assertion) => catalog.get(a, assertion),
  }),
] as ToolSpec[];
