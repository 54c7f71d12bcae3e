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
