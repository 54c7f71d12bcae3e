import {
  type AgentDelegation,
  type AgentInvokeJob,
  findAgent,
  forbiddenBindingTiers,
  type MemoryCompactJob,
} from '@pkgreg/contracts';
import type { Db } from '@pkgreg/db';
import { completeTask, PermanentJobError, startTask } from '@pkgreg/tasks';
import { runCompaction } from './compaction/compaction.service.js';
import {
  type AgentRunSummary,
  planWorkflow,
  recordRun,
  renderOutputs,
  type WorkflowRun,
} from './engineering-workflow/engineering-workflow.agent.js';
import type { AgentLimits } from './engineering-workflow/model-loop/limits.js';
import type { SkillSource } from './engineering-workflow/model-loop/skill-source.js';
import type { ModelConfig } from './engineering-workflow/model-refiner.js';
import type { PackageFinder } from './engineering-workflow/package-finder.js';

// The two task jobs of the runtime queue, whoever runs them: the BullMQ worker (apps/runtime-worker) or a
// local runtime's in-process runner. Each is idempotent: a delivery that finds its task already ended
// does nothing, and the run's writes commit with the task's completion (completeTask).

export interface RunDeps {
  db: Db;
  finder: PackageFinder;
  model: ModelConfig | null;
  /** The registry's skills for the model tool loop; without it a model only rewords titles. */
  skills?: SkillSource | null;
  limits?: AgentLimits;
  pollWindowSeconds: number;
  /**
   * Reads the registry as the person a job names (docs/agent.md, "Privacy"): given the job's delegation
   * and the task as the edge stored it, the run's assertion source, or undefined to read anonymously.
   * Absent (a local runtime, which holds no edge key): every run reads anonymously.
   */
  assertionsFor?: (
    delegation: AgentDelegation,
    task: { taskId: string; namespace: string },
  ) => (() => Promise<string>) | undefined;
}

/** What a host hears of one agent run besides its result: progress, and the model run for metrics. */
export interface RunHooks {
  onProgress?: (message: string) => void | Promise<void>;
  onAgentRun?: (run: AgentRunSummary) => void;
}

/** agent.invoke: the agent's plan, its stm record (with the write binding) and the task's result. */
export async function runAgentInvoke(deps: RunDeps, payload: AgentInvokeJob, hooks: RunHooks = {}) {
  const started = await startTask(deps.db, payload.taskId);
  // An earlier delivery already ended this task (or it was purged): nothing left to do.
  if (started.state !== 'started') return { skipped: started.state };
  const agent = findAgent(payload.agentId);
  if (!agent) throw new PermanentJobError('agent_not_available', 'The agent is not available');
  if (payload.memory) {
    // The edge checked both; the runner refuses rather than trust a job that slipped past it.
    if (payload.memory.namespace !== payload.namespace) {
      throw new PermanentJobError('namespace_unauthorized', 'The memory binding names another namespace');
    }
    if (forbiddenBindingTiers(agent, payload.memory).length > 0) {
      throw new PermanentJobError(
        'memory_binding_forbidden',
        'The memory binding is not allowed for this agent',
      );
    }
  }
  // The task row's namespace, not the job's: only the edge writes the row, so a job cannot borrow a person
  // for a task of another caller's.
  const assertion = payload.delegation
    ? deps.assertionsFor?.(payload.delegation, {
        taskId: payload.taskId,
        namespace: started.task.subject_namespace,
      })
    : undefined;
  const run: WorkflowRun = {
    taskId: payload.taskId,
    runId: payload.runId,
    namespace: payload.namespace,
    input: payload.input,
    memory: payload.memory,
  };
  const plan = await planWorkflow(
    {
      db: deps.db,
      finder: deps.finder,
      model: deps.model,
      skills: deps.skills ?? null,
      ...(deps.limits ? { limits: deps.limits } : {}),
      ...(assertion ? { assertion } : {}),
      ...(hooks.onProgress ? { onProgress: hooks.onProgress } : {}),
      ...(hooks.onAgentRun ? { onAgentRun: hooks.onAgentRun } : {}),
    },
    run,
  );
  // The stm record and the completion commit together: a redelivery finds the task ended and writes nothing.
  const outcome = await completeTask(
    deps.db,
    payload.taskId,
    async (trx) => {
      await recordRun(trx, run, plan);
      return { runId: payload.runId, outputs: renderOutputs(plan) };
    },
    deps.pollWindowSeconds,
  );
  return { applied: outcome.applied };
}

/** memory.compact: the window's compaction, written with the task's completion. */
export async function runMemoryCompact(
  deps: Pick<RunDeps, 'db' | 'pollWindowSeconds'>,
  payload: MemoryCompactJob,
) {
  const started = await startTask(deps.db, payload.taskId);
  if (started.state !== 'started') return { skipped: started.state };
  const outcome = await completeTask(
    deps.db,
    payload.taskId,
    (trx) => runCompaction(trx, payload),
    deps.pollWindowSeconds,
  );
  return { applied: outcome.applied };
}
