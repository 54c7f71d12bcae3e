import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { cacheControlFor, VARY_VIEWER } from './cache-policy.js';

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

/** A weak ETag over `parts`: for answers read after their validator, equivalent rather than byte-identical. */
export function weakEtagOf(...parts: string[]): string {
  const hash = createHash('sha1');
  for (const part of parts) hash.update(part).update('\0');
  return `W/"${hash.digest('base64url').slice(0, 22)}"`;
}

/** A strong ETag over the exact bytes sent (small JSON answers whose queries are cheaper than a validator). */
export function strongEtagOf(bytes: Buffer | string): string {
  return `"${createHash('sha256').update(bytes).digest('base64url').slice(0, 27)}"`;
}

/** RFC 9110 If-None-Match uses the weak comparison: `W/` prefixes are ignored; `*` matches anything. */
export function matchesIfNoneMatch(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  const opaque = (tag: string) => tag.trim().replace(/^W\//, '');
  const wanted = etag.startsWith('W/') ? etag.slice(2) : etag;
  return header.split(',').some((tag) => tag.trim() === '*' || opaque(tag) === wanted);
}

/**
 * RFC 9110 13.2.2: If-None-Match decides when present; If-Modified-Since is read only without it, only
 * for GET and HEAD, and only when the answer has a Last-Modified (HTTP dates have whole seconds).
 */
export function isNotModified(req: IncomingMessage, etag: string, lastModified?: Date): boolean {
  const ifNoneMatch = req.headers['if-none-match'];
  if (ifNoneMatch !== undefined) return matchesIfNoneMatch(ifNoneMatch, etag);
  const since = req.headers['if-modified-since'];
  if (!lastModified || !since || (req.method !== 'GET' && req.method !== 'HEAD')) return false;
  const sinceMs = Date.parse(since);
  return !Number.isNaN(sinceMs) && Math.floor(lastModified.getTime() / 1000) * 1000 <= sinceMs;
}

/**
 * Sets the validators, Cache-Control and Vary of a GET answer and, when the client holds it, answers 304
 * (true: nothing more to send). Where the validator is known before the answer (list, search), calling
 * this first makes a 304 cost no query for the answer. A request with credentials is answered
 * `private, no-store` (cache-policy.ts), whatever `cacheControl` says.
 */
export function answerIfNotModified(
  req: IncomingMessage,
  res: ServerResponse,
  validators: { etag: string; cacheControl: string; lastModified?: Date },
): boolean {
  res.setHeader('ETag', validators.etag);
  res.setHeader('Cache-Control', cacheControlFor(req, validators.cacheControl));
  res.setHeader('Vary', VARY_VIEWER);
  if (validators.lastModified) res.setHeader('Last-Modified', validators.lastModified.toUTCString());
  if (!isNotModified(req, validators.etag, validators.lastModified)) return false;
  res.statusCode = 304;
  res.end();
  return true;
}

// Detail carries downloadCount, which moves every flush: clients revalidate each time (a cheap 304).
export const DETAIL_CACHE_CONTROL = 'public, max-age=0, must-revalidate';
/** Detail's and track's JSON bodies. */
export const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';
export const SKILL_MD_CONTENT_TYPE = 'text/markdown; charset=utf-8';

/**
 * Writes a cached representation straight to node's response, or 304 when the client holds it: ETag
 * and Content-Length come with the cache entry, so nothing is hashed, serialized or measured per
 * request (Express's res.type()/res.send() cost a mime lookup, a charset rewrite and a byteLength).
 * Every header, the request id too, goes in the one writeHead: a header set before it would make node
 * set each of these one by one.
 */
export function sendEncoded(
  req: IncomingMessage,
  res: ServerResponse,
  body: EncodedBody,
  contentType: string,
  cacheControl: string,
  requestId: string,
): void {
  if (matchesIfNoneMatch(req.headers['if-none-match'], body.etag)) {
    res.writeHead(304, {
      'X-Request-Id': requestId,
      ETag: body.etag,
      'Cache-Control': cacheControl,
      Vary: VARY_VIEWER,
    });
    res.end();
    return;
  }
  res.writeHead(200, {
    'X-Request-Id': requestId,
    ETag: body.etag,
    'Cache-Control': cacheControl,
    Vary: VARY_VIEWER,
    'Content-Type': contentType,
    'Content-Length': body.length,
  });
  // node drops the body itself for HEAD, keeping Content-Length.
  res.end(body.bytes);
}
