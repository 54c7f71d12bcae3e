import type { Request } from 'express';

/** A strong ETag from a row's version (not a hash of the body: the row says when it changed). */
export function etagFor(version: string, variant: string): string {
  return `"${version}.${variant}"`;
}

/** RFC 9110 If-None-Match uses the weak comparison: `W/` prefixes are ignored; `*` matches anything. */
export function matchesIfNoneMatch(req: Request, etag: string): boolean {
  // Straight from node's headers (already lower-cased): req.get() costs a call chain per request.
  const header = req.headers['if-none-match'];
  if (!header) return false;
  const opaque = (tag: string) => tag.trim().replace(/^W\//, '');
  return header.split(',').some((tag) => tag.trim() === '*' || opaque(tag) === etag);
}
