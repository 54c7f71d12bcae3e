import { createHash } from 'node:crypto';

/**
 * JSON with object keys sorted at every depth, so two argument objects that differ only in key order
 * hash alike. Undefined members are dropped, as JSON.stringify drops them.
 */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => {
    if (v === null || typeof v !== 'object' || Array.isArray(v)) return v;
    const sorted: Record<string, unknown> = {};
    for (const k of Object.keys(v).sort()) sorted[k] = (v as Record<string, unknown>)[k];
    return sorted;
  });
}

/** sha256 hex of the canonical JSON of `args`: what an idempotency record remembers of the request. */
export function requestHash(args: unknown): string {
  return createHash('sha256')
    .update(canonicalJson(args) ?? 'undefined')
    .digest('hex');
}
