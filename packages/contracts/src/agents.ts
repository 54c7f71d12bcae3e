import { z } from 'zod';
import type { AgentCatalogEntry, MemoryTier } from './mcp.js';

// The public agent catalog (mcp-edge.md, "Current catalog"): the only agents the edge admits.

export const ENGINEERING_WORKFLOW_AGENT_ID = 'engineering.workflow';

export const AGENT_CATALOG: readonly AgentCatalogEntry[] = [
  {
    agentId: ENGINEERING_WORKFLOW_AGENT_ID,
    title: 'Engineering workflow planner',
    description:
      'Turns a structured engineering-orchestration request into an ordered plan of steps with dependencies, ' +
      'the registry packages that fit each step, and the long-term facts it used.',
    inputModes: ['text', 'packet', 'json'],
    memoryBinding: { supported: true, readTiers: ['ltm'], writeTiers: ['stm'] },
    execution: { taskSupport: 'optional', asyncThreshold: 'long_running_only' },
  },
];

export function findAgent(agentId: string): AgentCatalogEntry | undefined {
  return AGENT_CATALOG.find((a) => a.agentId === agentId);
}

/** Tiers of a requested binding that the agent does not allow (empty when the binding fits). */
export function forbiddenBindingTiers(
  agent: AgentCatalogEntry,
  binding: { readTiers: MemoryTier[]; writeTiers: MemoryTier[] },
): string[] {
  const read = binding.readTiers
    .filter((t) => !agent.memoryBinding.readTiers.includes(t))
    .map((t) => `read:${t}`);
  const write = binding.writeTiers
    .filter((t) => !agent.memoryBinding.writeTiers.includes(t))
    .map((t) => `write:${t}`);
  return agent.memoryBinding.supported ? [...read, ...write] : [...read, ...write, 'unsupported'];
}

/**
 * Per-run limits of the agent's model tool loop (docs/agent.md, "Limits"). The operator sets them (the
 * runtime worker's AGENT_MAX_*), the system info shows them; they are fixed before the loop starts.
 */
export interface AgentLimits {
  /** Model calls per run; the last one may only submit the plan. */
  maxSteps: number;
  /** Prompt tokens summed over the run's model calls (as the endpoint reports them, else estimated). */
  maxInputTokens: number;
  /** Completion tokens summed over the run's model calls. */
  maxOutputTokens: number;
  /** Wall time of the whole loop (ms), model calls and tool reads together. */
  maxWallMs: number;
  /** Bytes of skill content (SKILL.md and files) handed to the model per run. */
  maxSkillBytes: number;
  /** Failed model calls and malformed tool calls tolerated per run before the rule planner takes over. */
  maxRetries: number;
}

export const DEFAULT_AGENT_LIMITS: AgentLimits = {
  maxSteps: 8,
  maxInputTokens: 60_000,
  maxOutputTokens: 8_000,
  maxWallMs: 60_000,
  maxSkillBytes: 48 * 1024,
  maxRetries: 2,
};

/**
 * The AGENT_MAX_* variables as both the runtime worker (which runs with them) and the edge (whose system
 * info shows them) read them from one env file: a value one refuses, both refuse.
 */
export const agentLimitsEnvShape = {
  AGENT_MAX_STEPS: z.coerce.number().int().min(1).max(50).default(DEFAULT_AGENT_LIMITS.maxSteps),
  AGENT_MAX_INPUT_TOKENS: z.coerce.number().int().min(1000).default(DEFAULT_AGENT_LIMITS.maxInputTokens),
  AGENT_MAX_OUTPUT_TOKENS: z.coerce.number().int().min(100).default(DEFAULT_AGENT_LIMITS.maxOutputTokens),
  AGENT_MAX_WALL_MS: z.coerce.number().int().min(1000).default(DEFAULT_AGENT_LIMITS.maxWallMs),
  AGENT_MAX_SKILL_BYTES: z.coerce.number().int().min(1024).default(DEFAULT_AGENT_LIMITS.maxSkillBytes),
  /** Failed model calls and malformed tool calls retried per run before the rule planner takes over. */
  AGENT_MAX_RETRIES: z.coerce.number().int().min(0).max(10).default(DEFAULT_AGENT_LIMITS.maxRetries),
};

/** The limits as read from the variables of agentLimitsEnvShape. */
export function agentLimitsFromEnv(
  env: {
    [K in keyof typeof agentLimitsEnvShape]: number;
  },
): AgentLimits {
  return {
    maxSteps: env.AGENT_MAX_STEPS,
    maxInputTokens: env.AGENT_MAX_INPUT_TOKENS,
    maxOutputTokens: env.AGENT_MAX_OUTPUT_TOKENS,
    maxWallMs: env.AGENT_MAX_WALL_MS,
    maxSkillBytes: env.AGENT_MAX_SKILL_BYTES,
    maxRetries: env.AGENT_MAX_RETRIES,
  };
}
