import {
  type AgentInvokeJob,
  findAgent,
  forbiddenBindingTiers,
  type JobHandlers,
  type MemoryCompactJob,
} from '@pkgreg/contracts';
import type { Db } from '@pkgreg/db';
import { type IndexerDeps, indexSource, reindexAll } from '@pkgreg/indexer';
import { deleteExpiredIdempotencyRecords } from '@pkgreg/memory';
import type { Logger } from '@pkgreg/server-kit';
import {
  completeTask,
  failOrphanedTasks,
  purgeExpiredTasks,
  type RuntimeQueue,
  startTask,
} from '@pkgreg/tasks';
import type { Job } from 'bullmq';
import {
  planWorkflow,
  recordRun,
  renderOutputs,
  type WorkflowRun,
} from '../agents/engineering-workflow/engineering-workflow.agent.js';
import type { ModelConfig } from '../agents/engineering-workflow/model-refiner.js';
import type { PackageFinder } from '../agents/engineering-workflow/package-finder.js';
import { runCompaction } from '../compaction/compaction.service.js';
import { PermanentJobError } from './job-errors.js';

// One handler per job of the catalog (STYLE.md §10): JobHandlers<Ctx> fails typecheck if one is missing.

export interface HandlerDeps {
  db: Db;
  logger: Logger;
  queue: RuntimeQueue;
  finder: PackageFinder;
  model: ModelConfig | null;
  /** Code host settings for indexing; the token stays here, never in job data. */
  indexer: Omit<IndexerDeps, 'db' | 'logger'>;
  pollWindowSeconds: number;
  orphanAfterSeconds: number;
}

export interface JobContext {
  job: Job;
}

async function agentInvoke(deps: HandlerDeps, payload: AgentInvokeJob) {
  const started = await startTask(deps.db, payload.taskId);
  // An earlier delivery already ended this task (or it was purged): nothing left to do.
  if (started.state !== 'started') return { skipped: started.state };
  const agent = findAgent(payload.agentId);
  if (!agent) throw new PermanentJobError('agent_not_available', 'The agent is not available');
  if (payload.memory) {
    // The edge checked both; the worker refuses rather than trust a job that slipped past it.
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
  const run: WorkflowRun = {
    taskId: payload.taskId,
    runId: payload.runId,
    namespace: payload.namespace,
    input: payload.input,
    memory: payload.memory,
  };
  const plan = await planWorkflow({ db: deps.db, finder: deps.finder, model: deps.model }, run);
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

export function createJobHandlers(deps: HandlerDeps): JobHandlers<JobContext> {
  return {
    'agent.invoke': (payload) => agentInvoke(deps, payload),
    'memory.compact': async (payload: MemoryCompactJob) => {
      const started = await startTask(deps.db, payload.taskId);
      if (started.state !== 'started') return { skipped: started.state };
      const outcome = await completeTask(
        deps.db,
        payload.taskId,
        (trx) => runCompaction(trx, payload),
        deps.pollWindowSeconds,
      );
      return { applied: outcome.applied };
    },
    'registry.index': async (payload) => {
      const summary = await indexSource({ db: deps.db, logger: deps.logger, ...deps.indexer }, payload);
      return { status: summary.status, locator: summary.locator };
    },
    'registry.reindex-all': async () => {
      const summaries = await reindexAll({ db: deps.db, logger: deps.logger, ...deps.indexer });
      return { sources: summaries.length, failed: summaries.filter((s) => s.status === 'failed').length };
    },
    'tasks.purge-expired': async () => {
      const purged = await purgeExpiredTasks(deps.db);
      // Idempotency replays live 24 h (decisions.md); nothing else sweeps their rows.
      const idempotencyRecords = await deleteExpiredIdempotencyRecords(deps.db);
      const orphaned = await failOrphanedTasks(deps.db, deps.queue, {
        olderThanSeconds: deps.orphanAfterSeconds,
        pollWindowSeconds: deps.pollWindowSeconds,
      });
      return { purged, orphaned, idempotencyRecords };
    },
  };
}
