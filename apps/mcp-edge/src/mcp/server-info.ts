import {
  type BackendMode,
  MAX_INVOKE_INPUT_BYTES,
  MCP_EXTENSIONS,
  MCP_PROTOCOL_VERSION,
  MEMORY_LIMITS,
  SERVED_PROTOCOL_REVISIONS,
  SUPPORTED_PROTOCOL_VERSIONS,
  type SystemInfoResult,
  TOOL_NAMES,
  type ToolDescriptor,
  toJsonSchema,
} from '@pkgreg/contracts';
import type { z } from 'zod';
import type { Env } from '../env.js';
import { TOOL_SPECS, type ToolSpec } from '../tools/tool-catalog.js';
import { SUPPORTED_REVISIONS } from './modern.js';

export const SERVER_VERSION = '0.1.0';
const TOOL_VERSION = '1.0.0';

/**
 * MCP 2025-11-25 takes JSON Schema 2020-12 as the default dialect, so `$schema` is dropped: clients
 * that compile schemas with an older default validator (the SDK's Ajv) would otherwise refuse them.
 * MCP also wants `type: "object"` at the root of both schemas, which a union does not state itself.
 */
function mcpSchema(schema: z.ZodType, io: 'input' | 'output'): Record<string, unknown> {
  const { $schema: _dialect, ...json } = toJsonSchema(schema, io);
  return json.type === undefined ? { type: 'object', ...json } : json;
}

export function toolDescriptor(spec: ToolSpec): ToolDescriptor {
  return {
    name: spec.name,
    version: TOOL_VERSION,
    description: spec.description,
    capabilities: ['external'],
    permissionScope: 'external',
    inputSchema: mcpSchema(spec.args, 'input'),
    outputSchema: mcpSchema(spec.result, 'output'),
    execution: { taskSupport: spec.taskSupport },
  };
}

/** Public tool mappings minus the ones the operator switched off. */
export function enabledTools(env: Env): ToolSpec[] {
  return TOOL_SPECS.filter((t) => !env.EDGE_DISABLED_TOOLS.includes(t.name));
}

/** MCP lifecycle: echo the client's version when supported, else answer the latest. */
export function negotiateVersion(requested: string): string {
  return (SUPPORTED_PROTOCOL_VERSIONS as readonly string[]).includes(requested)
    ? requested
    : MCP_PROTOCOL_VERSION;
}

export function initializeResult(env: Env, requestedVersion: string) {
  return {
    protocolVersion: negotiateVersion(requestedVersion),
    serverInfo: { name: env.PKGREG_SERVER_NAME, version: SERVER_VERSION },
    capabilities: {
      tools: { listChanged: false },
      resources: { subscribe: false, listChanged: false },
      tasks: {},
      // SEP-2640: skills/list, skills/get and resources/directory/read (docs/decisions.md, "Skills over MCP").
      extensions: { [MCP_EXTENSIONS.skills]: { directoryRead: true } },
    },
  };
}

/**
 * server/discover (MCP 2026-07-28): both revisions, as -32022 and the server card list them (the older
 * one through `initialize`), and initialize's capabilities as 2026-07-28 has them: no `tasks` (the
 * contract's 2025-11-25 tasks), the tasks extension instead. The server's identity goes in every
 * result's `_meta` (mcp/modern.ts), not here.
 */
export function discoverResult(env: Env) {
  const { tasks: _contractTasks, ...capabilities } = initializeResult(env, MCP_PROTOCOL_VERSION)
    .capabilities as Record<string, unknown> & { extensions?: Record<string, unknown> };
  return {
    supportedVersions: SUPPORTED_REVISIONS,
    capabilities: {
      ...capabilities,
      extensions: { ...capabilities.extensions, [MCP_EXTENSIONS.tasks]: {} },
    },
  };
}

/** mcp-edge.md, System info result: one shape in every backend; only server.* varies. */
export function systemInfo(env: Env, backendMode: BackendMode): SystemInfoResult {
  const enabled = new Set(enabledTools(env).map((t) => t.name));
  return {
    server: {
      name: env.PKGREG_SERVER_NAME,
      phase: env.PKGREG_SERVER_PHASE,
      backendMode,
      protocolVersion: MCP_PROTOCOL_VERSION,
      protocolVersions: [...SERVED_PROTOCOL_REVISIONS],
    },
    features: {
      publicAgents: enabled.has(TOOL_NAMES.agentsList) || enabled.has(TOOL_NAMES.agentsInvoke),
      publicSystemInfo: enabled.has(TOOL_NAMES.systemInfo),
      publicTasks: true,
      publicCompactAsync: enabled.has(TOOL_NAMES.memoryCompact),
    },
    limits: {
      maxInvokeInputBytes: MAX_INVOKE_INPUT_BYTES,
      maxSearchTopK: MEMORY_LIMITS.maxSearchTopK,
      maxTaskPollWindowSeconds: env.EDGE_MAX_TASK_POLL_WINDOW_SECONDS,
      maxMemoryContentBytes: MEMORY_LIMITS.maxContentBytes,
      maxMemoryTags: MEMORY_LIMITS.maxTags,
      maxMemoryTagLength: MEMORY_LIMITS.maxTagLength,
      maxMemoryMetadataKeys: MEMORY_LIMITS.maxMetadataKeys,
      maxMemoryMetadataValueLength: MEMORY_LIMITS.maxMetadataValueLength,
      maxCompactEntries: MEMORY_LIMITS.maxCompactEntries,
      // One agent run's limits (docs/agent.md, "Limits"), as the runtime worker applies them.
      agentMaxSteps: env.AGENT_MAX_STEPS,
      agentMaxInputTokens: env.AGENT_MAX_INPUT_TOKENS,
      agentMaxOutputTokens: env.AGENT_MAX_OUTPUT_TOKENS,
      agentMaxWallMs: env.AGENT_MAX_WALL_MS,
      agentMaxSkillBytes: env.AGENT_MAX_SKILL_BYTES,
    },
    quotas: {
      invokePerMinute: env.EDGE_INVOKE_PER_MINUTE,
      compactPerMinute: env.EDGE_COMPACT_PER_MINUTE,
      toolRequestsPerMinute: env.EDGE_RATE_LIMIT_PER_MINUTE,
    },
    tasks: {
      supportedMethods: ['tasks/get', 'tasks/result'],
      toolSupport: { [TOOL_NAMES.agentsInvoke]: 'optional', [TOOL_NAMES.memoryCompact]: 'optional' },
    },
    agent: agentPosture(env),
  };
}

/** The planner engineering.workflow runs: the model tool loop when a model is set, else the rules. */
function agentPosture(env: Env): NonNullable<SystemInfoResult['agent']> {
  return env.MODEL_BASE_URL && env.AGENT_TOOL_LOOP
    ? { planner: 'model', provider: env.MODEL_PROVIDER }
    : { planner: 'rules', provider: null };
}
