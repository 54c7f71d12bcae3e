import type { PublishResult, RegistryIndexJob } from '@pkgreg/contracts';
import type { Db } from '@pkgreg/db';
import {
  type IndexerDeps,
  type IndexFailure,
  IndexingError,
  type IndexRequest,
  type IndexSummary,
  indexSource,
} from '@pkgreg/indexer';
import { finishPublishRun, startPublishRun } from '@pkgreg/registry';
import type { Logger } from '@pkgreg/server-kit';
import type { Job } from 'bullmq';
import { isPermanent } from './job-errors.js';

// `registry.index`: a crawl, or a publish reporting to its publish run (docs/publishing.md).

export interface RegistryIndexDeps {
  db: Db;
  logger: Logger;
  /** Code host settings; the token stays here, never in job data. */
  indexer: Omit<IndexerDeps, 'db' | 'logger'>;
}

function publishResultOf(summary: IndexSummary): PublishResult {
  return {
    sourceRepo: summary.sourceRepo ?? summary.locator,
    commit: summary.commit,
    notModified: summary.notModified,
    skills: summary.skills,
  };
}

function requestOf(payload: RegistryIndexJob): IndexRequest {
  return {
    kind: payload.kind,
    locator: payload.locator,
    ...(payload.includeHidden !== undefined ? { includeHidden: payload.includeHidden } : {}),
    ...(payload.ref !== undefined ? { ref: payload.ref } : {}),
    ...(payload.proof ? { proof: payload.proof } : {}),
    ...(payload.ownerId !== undefined ? { expectedOwnerId: payload.ownerId } : {}),
    ...(payload.repositoryId !== undefined ? { expectedRepositoryId: payload.repositoryId } : {}),
  };
}

/**
 * Indexes the source. With a publish run: queued -> running -> succeeded with the per-skill result, or
 * failed once retrying cannot help (a permanent failure, or the last attempt); a delivery of a run that
 * already ended does nothing.
 */
export async function runRegistryIndex(deps: RegistryIndexDeps, payload: RegistryIndexJob, job: Job) {
  const indexerDeps = { db: deps.db, logger: deps.logger, ...deps.indexer };
  const request = requestOf(payload);
  const runId = payload.publishRunId;
  if (!runId) {
    const summary = await indexSource(indexerDeps, request);
    return { status: summary.status, locator: summary.locator };
  }
  if (!(await startPublishRun(deps.db, runId))) return { skipped: 'ended', publishRunId: runId };
  try {
    const summary = await indexSource(indexerDeps, request);
    await finishPublishRun(deps.db, runId, {
      status: 'succeeded',
      result: publishResultOf(summary),
      indexingRunId: summary.runId,
    });
    return { status: summary.status, locator: summary.locator, publishRunId: runId };
  } catch (error) {
    const lastAttempt = job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
    if (isPermanent(error) || lastAttempt) {
      // An indexing error's message is written for the publisher (a refused scope, a missing branch, a
      // rate limit); anything else may hold internals and stays in the log.
      const message =
        error instanceof IndexingError ? error.message : 'The run failed; the registry logged the cause';
      await finishPublishRun(deps.db, runId, {
        status: 'failed',
        error: message,
        indexingRunId: (error as Partial<IndexFailure>).summary?.runId ?? null,
      });
    }
    throw error;
  }
}
