import { PACKAGE_NOT_FOUND_MESSAGE, type ReportAccepted, ReportRequestSchema } from '@pkgreg/contracts';
import type { Db } from '@pkgreg/db';
import type { ReadAccess } from '@pkgreg/registry';
import type { ReadAccessOf } from '../accounts/read-access-of.js';
import { ApiError, badRequest, notFound } from '../http/api-error.js';
import type { PackageKey } from '../packages/package-path.js';
import { findReportablePackageId, insertReport } from './moderation.repository.js';
import type { ReportLimiter } from './report-limiter.js';

// Reports (docs/risk-scan.md): anyone may report a package; each address a bounded number an hour.

export interface ReportDeps {
  db: Db;
  limiter: ReportLimiter;
  readAccess: ReadAccessOf;
}

/** Thrown past the limit; the route sets Retry-After from it. */
export class ReportRateLimited extends ApiError {
  constructor(readonly retryAfterSeconds: number) {
    super('too_many_requests', `Too many reports from this address; try again in ${retryAfterSeconds} s`);
  }
}

/** The body's first problem as the contract's message: the field, then what it must be. */
function parseBody(body: unknown) {
  const result = ReportRequestSchema.safeParse(body ?? {});
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const field = String(issue?.path[0] ?? '');
  const message = issue?.message ?? 'is invalid';
  if (issue?.code === 'unrecognized_keys')
    throw badRequest(`Unknown field in the report: ${issue.keys.join(', ')}`);
  throw badRequest(field && !message.startsWith(field) ? `${field}: ${message}` : message);
}

/**
 * Validates, then finds the package, then counts the report against the address, then stores it: a
 * refused report stores nothing, and a bad one is not counted.
 */
export async function submitReport(
  deps: ReportDeps,
  key: PackageKey,
  body: unknown,
  clientAddress: string,
  access: ReadAccess,
): Promise<ReportAccepted> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw badRequest('The report must be a JSON object: {"reason": "...", "details": "..."}');
  }
  const report = parseBody(body);
  const packageId = await findReportablePackageId(deps.db, key.scope, key.name, access);
  if (!packageId) throw notFound(PACKAGE_NOT_FOUND_MESSAGE);
  const limit = await deps.limiter.take(clientAddress);
  if (!limit.allowed) throw new ReportRateLimited(limit.retryAfterSeconds);
  const row = await insertReport(deps.db, {
    packageId,
    reason: report.reason,
    details: report.details?.trim() ? report.details : null,
    clientAddress,
  });
  return { id: row.id, createdAt: row.created_at.toISOString() };
}
