import { RejectError } from '@pkgreg/contracts';

/** A failure a retry cannot fix (bad input, a refused binding). Its reason and message reach the caller. */
export class PermanentJobError extends Error {
  readonly reason: string;

  constructor(reason: string, message: string) {
    super(message);
    this.name = 'PermanentJobError';
    this.reason = reason;
  }
}

/**
 * What a failed task tells its subject (tasks/result). Only reasons and messages written for callers;
 * an unexpected error's text may hold internals, so it is replaced by a generic one.
 */
export function toTaskError(error: unknown): { reason: string; message: string } {
  if (error instanceof PermanentJobError) return { reason: error.reason, message: error.message };
  if (error instanceof RejectError) return { reason: error.reason, message: error.message };
  return { reason: 'run_failed', message: 'The run failed' };
}
