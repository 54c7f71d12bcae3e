import { z } from 'zod';
import { hasLoneSurrogate, hasNul } from './storable-text.js';

// The risk scan of a version's files (@pkgreg/scan), reports of packages by anyone, and operator
// quarantine: issue 19's "Risk scan" (docs/risk-scan.md).

export const SeveritySchema = z.enum(['low', 'medium', 'high']);
export type Severity = z.infer<typeof SeveritySchema>;

/** A version's risk: its highest finding's severity, or `none` when the scan found nothing. */
export const RiskSchema = z.enum(['none', 'low', 'medium', 'high']);
export type Risk = z.infer<typeof RiskSchema>;

/** Risks from lowest to highest. */
export const RISK_ORDER: readonly Risk[] = ['none', 'low', 'medium', 'high'];

/** The higher of two risks. */
export function maxRisk(a: Risk, b: Risk): Risk {
  return RISK_ORDER.indexOf(a) >= RISK_ORDER.indexOf(b) ? a : b;
}

export const ScanFindingSchema = z.object({
  /**
   * Which rule fired (`remote-code-execution`, `secret`, `prompt-injection`, … docs/risk-scan.md). A
   * string, not an enum: later scans may add rules, and older clients still show them.
   */
  rule: z.string(),
  severity: SeveritySchema,
  /** Path of the file within the skill folder. */
  file: z.string(),
  /** 1-based line of the finding; null for what has no line (a symlink, a binary file). */
  line: z.number().int().min(1).nullable(),
  /** At most 120 characters of the line; secrets masked, invisible characters written as `\u{…}`. */
  excerpt: z.string().max(120),
  /** What the rule saw, in a sentence. */
  message: z.string(),
  /**
   * How the file's bytes were read when not as plain UTF-8: `utf-8-lenient` (invalid bytes replaced,
   * NULs dropped), `latin1`, `utf-16le`, `utf-16be`, `utf-32le`, `utf-32be`. Absent for UTF-8 and for
   * scans before it existed. A string: later scans may read other encodings.
   */
  encoding: z.string().optional(),
});
export type ScanFinding = z.infer<typeof ScanFindingSchema>;

export const REPORT_REASON_MAX_LENGTH = 200;
export const REPORT_DETAILS_MAX_LENGTH = 4000;

/** Body of POST /api/packages/@scope/name/reports. */
export const ReportRequestSchema = z.strictObject({
  /** Why the package is reported (malware, secrets, prompt injection, …): 1-200 characters. */
  reason: z
    .string({ error: 'reason is required: a string of 1 to 200 characters' })
    .trim()
    .min(1, { error: 'reason is required: a string of 1 to 200 characters' })
    .max(REPORT_REASON_MAX_LENGTH, { error: 'reason must be at most 200 characters' })
    .refine((s) => !hasNul(s) && !hasLoneSurrogate(s), {
      error: 'reason must not contain U+0000 or a lone surrogate',
    }),
  /** Anything else the reporter wants the operator to see (up to 4000 characters). */
  details: z
    .string({ error: 'details must be a string of at most 4000 characters' })
    .max(REPORT_DETAILS_MAX_LENGTH, { error: 'details must be at most 4000 characters' })
    .refine((s) => !hasNul(s) && !hasLoneSurrogate(s), {
      error: 'details must not contain U+0000 or a lone surrogate',
    })
    .optional(),
});
export type ReportRequest = z.infer<typeof ReportRequestSchema>;

/** Answer (201) of POST …/reports. */
export const ReportAcceptedSchema = z.object({
  /** The stored report's id. */
  id: z.uuid(),
  /** When it was received (ISO 8601). */
  createdAt: z.iso.datetime({ offset: true }),
});
export type ReportAccepted = z.infer<typeof ReportAcceptedSchema>;

export const QUARANTINED_INSTALL_MESSAGE = 'quarantined by the registry operator; install refused';
