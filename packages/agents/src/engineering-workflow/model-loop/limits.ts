// Per-run limits of the model tool loop (docs/agent.md, "Limits"): fixed before the loop starts, nothing
// the model or a skill says can change them. The limits, their defaults and their AGENT_MAX_* variables
// are @pkgreg/contracts', as the edge's system info shows them too.
export { type AgentLimits, DEFAULT_AGENT_LIMITS } from '@pkgreg/contracts';

/** The limit that ended a run early; `skillBytes` only stops reads, the run goes on. */
export type LimitName = 'steps' | 'inputTokens' | 'outputTokens' | 'wallTime';

/** Tokens for a text an endpoint did not count (some local servers report no usage): ~4 chars each. */
export function estimateTokens(chars: number): number {
  return Math.ceil(chars / 4);
}
