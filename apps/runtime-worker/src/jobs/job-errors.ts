import { RejectError } from '@pkgreg/contracts';
import { IndexingError } from '@pkgreg/indexer';
import { PermanentJobError } from '@pkgreg/tasks';
import { UnrecoverableError } from 'bullmq';

/**
 * A failure a retry cannot fix. PermanentJobError and RejectError are what the in-process runner of
 * @pkgreg/tasks treats as permanent too; the worker adds BullMQ's and the indexer's own.
 */
export function isPermanent(error: unknown): boolean {
  return (
    error instanceof PermanentJobError ||
    error instanceof RejectError ||
    error instanceof UnrecoverableError ||
    (error instanceof IndexingError && error.permanent)
  );
}
