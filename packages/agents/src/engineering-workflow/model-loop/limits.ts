// Per-run limits of the model tool loop (docs/agent.md, "Limits"). The operator sets them (runtime-worker
// env: AGENT_MAX_*); the system info shows them. They are fixed before the loop starts: nothing the
// model or a skill says can change them.

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

/** The limit that ended a run early; `skillBytes` only stops reads, the run goes on. */
export type LimitName = 'steps' | 'inputTokens' | 'outputTokens' | 'wallTime';

/** Tokens for a text an endpoint did not count (some local servers report no usage): ~4 chars each. */
export function estimateTokens(chars: number): number {
  return Math.ceil(chars / 4);
}
