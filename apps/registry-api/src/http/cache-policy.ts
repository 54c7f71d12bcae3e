import type { IncomingMessage } from 'node:http';
import { hasCredentials } from '../accounts/viewer.js';

// The registry's HTTP caching policy in one place (docs/caching.md has the table per route): what a
// browser, the CLI or a CDN in front may keep, and for how long, so that a delisting, quarantine or
// removal stops being served within a bound the operator sets.

/** What `immutable` promises a private cache: a year (RFC 8246), as npm and crates.io serve tarballs. */
const YEAR_S = 31_536_000;

/** Never stored by any cache: private or per-request answers, moderated content and every error. */
export const NO_STORE = 'no-store';

/**
 * Any answer to a request with credentials (a session cookie or a `pkgreg_` token): it may depend on who
 * asks (private packages), so neither a shared cache nor the browser's disk keeps it.
 */
export const PRIVATE_NO_STORE = 'private, no-store';

/**
 * Sent with every cacheable read answer: they depend on the viewer, so a shared cache keys them by the
 * credentials and never hands one viewer's answer to another (an anonymous request has neither header).
 */
export const VARY_VIEWER = 'Authorization, Cookie';

/** The Cache-Control of a cacheable answer to `req`: `cacheControl`, or PRIVATE_NO_STORE with credentials. */
export function cacheControlFor(req: IncomingMessage, cacheControl: string): string {
  return hasCredentials(req) ? PRIVATE_NO_STORE : cacheControl;
}

export interface CachePolicySettings {
  /** max-age of moving answers (lists, search, skill-md, `latest`, version metadata), seconds. */
  HTTP_CACHE_MAX_AGE_S: number;
  /** s-maxage of exact-version bytes: how long a shared cache may serve them before asking again. */
  HTTP_CACHE_CDN_MAX_AGE_S: number;
}

export interface CachePolicy {
  /** Moving answers: kept a short while, then revalidated (a cheap 304 when unchanged). */
  readonly moving: string;
  /**
   * Bytes of an exact version, which never change: a private cache keeps them for good, a shared one
   * revalidates after s-maxage, so an operator's removal (410) reaches every CDN within that bound.
   */
  readonly immutable: string;
}

export function cachePolicy(settings: CachePolicySettings): CachePolicy {
  return {
    moving: `public, max-age=${settings.HTTP_CACHE_MAX_AGE_S}, must-revalidate`,
    immutable: `public, max-age=${YEAR_S}, s-maxage=${settings.HTTP_CACHE_CDN_MAX_AGE_S}, immutable`,
  };
}
