// @pkgreg/agents: what the runtime runs for a task: the engineering.workflow agent and memory compaction,
// and the two task jobs around them (runs.ts), shared by the BullMQ worker and a local runtime.

export { type CompactionResult, runCompaction } from './compaction/compaction.service.js';
export { extractFacts, summarizeWindow, type WindowEntry } from './compaction/compaction-text.js';
export {
  type AgentRunSummary,
  type FactUsed,
  type PlanStep,
  planWorkflow,
  recordRun,
  renderOutputs,
  renderSummary,
  type WorkflowDeps,
  type WorkflowPlan,
  type WorkflowRun,
} from './engineering-workflow/engineering-workflow.agent.js';
export {
  type AgentLimits,
  DEFAULT_AGENT_LIMITS,
  type LimitName,
} from './engineering-workflow/model-loop/limits.js';
export {
  type LoopDeps,
  type LoopReport,
  type LoopRequest,
  type LoopResult,
  runModelLoop,
  type TranscriptEntry,
} from './engineering-workflow/model-loop/loop.js';
export {
  type ChatProvider,
  createChatProvider,
  type ProviderName,
} from './engineering-workflow/model-loop/providers.js';
export {
  createHttpSkillSource,
  type SkillReadAs,
  type SkillSource,
} from './engineering-workflow/model-loop/skill-source.js';
export { type ModelConfig, refineTitles } from './engineering-workflow/model-refiner.js';
export {
  createHttpPackageFinder,
  type PackageFinder,
  type RecommendedPackage,
} from './engineering-workflow/package-finder.js';
// The planner's rules, exported for their own tests.
export {
  buildSteps,
  classifyPhase,
  cleanTitle,
  readRequest,
  splitClauses,
  stepKeywords,
} from './engineering-workflow/plan-builder.js';
export { type RunDeps, type RunHooks, runAgentInvoke, runMemoryCompact } from './runs.js';
