import {
  type AgentLimits,
  type AgentRunSummary,
  type ModelConfig,
  type PackageFinder,
  type RunDeps,
  runAgentInvoke,
  runMemoryCompact,
  type SkillSource,
} from '@pkgreg/agents';
import type { JobHandlers, MemoryCompactJob } from '@pkgreg/contracts';
import type { Db } from '@pkgreg/db';
import { type IndexerDeps, reindexAll } from '@pkgreg/indexer';
import { collectUnreferencedBlobs } from '@pkgreg/registry';
import { deleteExpiredIdempotencyRecords, type Embedder } from '@pkgreg/memory';
import type { Logger } from '@pkgreg/server-kit';
import { failOrphanedTasks, purgeExpiredTasks, type RuntimeQueue, taskStatusWriter } from '@pkgreg/tasks';
import type { Job } from 'bullmq';
import { embedAfterWrite, runMemoryEmbed } from './memory-embed.js';
import { runRegistryIndex } from './registry-index.js';

// One handler per job of the catalog: JobHandlers<Ctx> fails typecheck if one is missing, so a job
// cannot be added without the code that runs it.

export interface HandlerDeps {
  db: Db;
  logger: Logger;
  queue: RuntimeQueue;
  finder: PackageFinder;
  model: ModelConfig | null;
  /** The registry's skills for the model tool loop (null: a model only rewords titles). */
  skills?: SkillSource | null;
  /** Limits of one model run (env AGENT_MAX_*). */
  limits?: AgentLimits;
  /** Reads the registry as the person a job names (delegated-reads.ts); absent, every run reads anonymously. */
  assertionsFor?: RunDeps['assertionsFor'];
  /** Told of each model run (the worker's token and outcome metrics). */
  onAgentRun?: (run: AgentRunSummary) => void;
  /** Code host settings for indexing; the token stays here, never in job data. */
  indexer: Omit<IndexerDeps, 'db' | 'logger'>;
  pollWindowSeconds: number;
  orphanAfterSeconds: number;
  /** Embeddings of memory entries (optional semantic search); the API key stays here, never in job data. */
  embedder?: Embedder | null;
}

export interface JobContext {
  job: Job;
}

export function createJobHandlers(deps: HandlerDeps): JobHandlers<JobContext> {
  return {
    'agent.invoke': async (payload) => {
      const status = taskStatusWriter(deps.db, payload.taskId);
      let outcome: Awaited<ReturnType<typeof runAgentInvoke>>;
      try {
        outcome = await runAgentInvoke(deps, payload, {
          // The run's progress: the task's status message (tasks/get, for the caller only). Not BullMQ's
          // job progress: its events stream would carry a model's words (a search may quote memory) to
          // anyone reading the queue, unthrottled.
          onProgress: (message) => status.update(message),
          ...(deps.onAgentRun ? { onAgentRun: deps.onAgentRun } : {}),
        });
      } finally {
        status.close();
      }
      // With a write binding the run recorded itself in stm.
      const wrote =
        'applied' in outcome && outcome.applied === true && Boolean(payload.memory?.writeTiers.length);
      await embedAfterWrite(deps, payload.namespace, wrote);
      return outcome;
    },
    'memory.compact': async (payload: MemoryCompactJob) => {
      const outcome = await runMemoryCompact(deps, payload);
      await embedAfterWrite(deps, payload.namespace, 'applied' in outcome && outcome.applied === true);
      return outcome;
    },
    'memory.embed': (payload) => runMemoryEmbed(deps, payload),
    'registry.index': (payload, { job }) => runRegistryIndex(deps, payload, job),
    'registry.reindex-all': async () => {
      const summaries = await reindexAll({ db: deps.db, logger: deps.logger, ...deps.indexer });
      return { sources: summaries.length, failed: summaries.filter((s) => s.status === 'failed').length };
    },
    // Never waits: an indexing run in progress only postpones the collection to the next schedule.
    'registry.gc-blobs': () => collectUnreferencedBlobs(deps.db),
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
