import { JOB_CATALOG, type JobName, type JobPayload, RejectError } from '@pkgreg/contracts';

/**
 * A job's payload checked against its catalog schema before anything schedules it: a bad one fails its
 * caller, not a worker.
 */
export function parseJobPayload<N extends JobName>(name: N, payload: JobPayload<N>): JobPayload<N> {
  const parsed = JOB_CATALOG[name].schema.safeParse(payload);
  if (!parsed.success) {
    throw new RejectError('request_schema_invalid', `invalid ${name} job payload`, {
      issues: parsed.error.issues.map((i) => ({ path: i.path.join('.'), message: i.message })),
    });
  }
  return parsed.data as JobPayload<N>;
}
