import type { IncomingMessage, ServerResponse } from 'node:http';

/** One representation, encoded once: the hot path writes these bytes and headers as they are. */
export interface EncodedBody {
  etag: string;
  bytes: Buffer;
  /** Content-Length, already a string (setHeader would convert it on every response). */
  length: string;
}

export function encodeBody(text: string, etag: string): EncodedBody {
  const bytes = Buffer.from(text, 'utf8');
  return { etag, bytes, length: String(bytes.length) };
}

/** A strong ETag from a row's version (not a hash of the body: the row says when it changed). */
export function etagFor(version: string, variant: string): string {
  return `"${version}.${variant}"`;
}

/** RFC 9110 If-None-Match uses the weak comparison: `W/` prefixes are ignored; `*` matches anything. */
export function matchesIfNoneMatch(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  const opaque = (tag: string) => tag.trim().replace(/^W\//, '');
  return header.split(',').some((tag) => tag.trim() === '*' || opaque(tag) === etag);
}

// Detail carries downloadCount, which moves every flush: clients revalidate each time (a cheap 304).
export const DETAIL_CACHE_CONTROL = 'public, max-age=0, must-revalidate';
// SKILL.md changes only on re-indexing: a minute of caching is harmless and saves the round trip.
export const SKILL_MD_CACHE_CONTROL = 'public, max-age=60, must-revalidate';
/** Detail's and track's JSON bodies. */
export const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';
export const SKILL_MD_CONTENT_TYPE = 'text/markdown; charset=utf-8';

/**
 * Writes a cached representation straight to node's response, or 304 when the client holds it: ETag
 * and Content-Length come with the cache entry, so nothing is hashed, serialized or measured per
 * request (Express's res.type()/res.send() cost a mime lookup, a charset rewrite and a byteLength).
 */
export function sendEncoded(
  req: IncomingMessage,
  res: ServerResponse,
  body: EncodedBody,
  contentType: string,
  cacheControl: string,
): void {
  if (matchesIfNoneMatch(req.headers['if-none-match'], body.etag)) {
    res.writeHead(304, { ETag: body.etag, 'Cache-Control': cacheControl });
    res.end();
    return;
  }
  res.writeHead(200, {
    ETag: body.etag,
    'Cache-Control': cacheControl,
    'Content-Type': contentType,
    'Content-Length': body.length,
  });
  // node drops the body itself for HEAD, keeping Content-Length.
  res.end(body.bytes);
}
