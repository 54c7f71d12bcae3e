import { z } from 'zod';

// The transparency log's HTTP answers (issue 30; docs/provenance.md, "Transparency log"): proofs and
// entries for clients and witnesses. The checkpoint itself is a signed note (text/plain), not JSON.

/** Most entries one GET /api/log/entries answers. */
export const LOG_ENTRIES_MAX_LIMIT = 1000;

/** A whole number query parameter, given once, in decimal (no sign, exponent or leading zero). */
const wholeNumber = (name: string, rule: string) =>
  z
    .string({
      error: (issue) =>
        Array.isArray(issue.input) ? `${name} must be given once` : `${name} must be ${rule}`,
    })
    .regex(/^(0|[1-9][0-9]{0,14})$/, { error: `${name} must be ${rule}` })
    .transform(Number);

/** Query of GET /api/log/proof/inclusion. */
export const LogInclusionQuerySchema = z.object({
  /** The leaf's index (0-based). */
  index: wholeNumber('index', 'a whole number'),
  /** The tree size the proof is for: at most the latest checkpoint's. */
  size: wholeNumber('size', 'a whole number'),
});
export type LogInclusionQuery = z.infer<typeof LogInclusionQuerySchema>;

/** Query of GET /api/log/proof/consistency. */
export const LogConsistencyQuerySchema = z.object({
  /** The older tree size. */
  from: wholeNumber('from', 'a whole number'),
  /** The newer tree size: at most the latest checkpoint's. */
  to: wholeNumber('to', 'a whole number'),
});
export type LogConsistencyQuery = z.infer<typeof LogConsistencyQuerySchema>;

/** Query of GET /api/log/entries. */
export const LogEntriesQuerySchema = z.object({
  /** The first leaf's index. */
  start: wholeNumber('start', 'a whole number').default(0),
  limit: wholeNumber('limit', `a whole number from 1 to ${LOG_ENTRIES_MAX_LIMIT}`)
    .pipe(
      z
        .number()
        .min(1, { error: `limit must be a whole number from 1 to ${LOG_ENTRIES_MAX_LIMIT}` })
        .max(LOG_ENTRIES_MAX_LIMIT, {
          error: `limit must be a whole number from 1 to ${LOG_ENTRIES_MAX_LIMIT}`,
        }),
    )
    .default(LOG_ENTRIES_MAX_LIMIT),
});
export type LogEntriesQuery = z.infer<typeof LogEntriesQuerySchema>;

/** An inclusion or consistency proof: RFC 9162's path, base64 SHA-256 hashes in the RFC's order. */
export const LogProofSchema = z.object({
  hashes: z.array(z.string().regex(/^[A-Za-z0-9+/]{43}=$/)),
});
export type LogProof = z.infer<typeof LogProofSchema>;

/** One leaf of the log. */
export const LogEntrySchema = z.object({
  index: z.number().int().nonnegative(),
  /** `@scope/name@version sha512-…`; the leaf hash is SHA-256(0x00 || these UTF-8 bytes). */
  entry: z.string(),
});
export type LogEntryDto = z.infer<typeof LogEntrySchema>;

/** GET /api/log/entries: leaves from `start`, none past the latest checkpoint's size. */
export const LogEntriesResponseSchema = z.object({
  entries: z.array(LogEntrySchema),
});
export type LogEntriesResponse = z.infer<typeof LogEntriesResponseSchema>;
