// @pkgreg/agents: what the runtime runs for a task: the engineering.workflow agent and memory compaction,
// and the two task jobs around them (runs.ts), shared by the BullMQ worker and a local runtime.

export { type CompactionResult, runCompaction } from './compaction/compaction.service.js';
export { extractFacts, summarizeWindow, type WindowEntry } from './compaction/compaction-text.js';
export {
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
export { type RunDeps, runAgentInvoke, runMemoryCompact } from './runs.js';
