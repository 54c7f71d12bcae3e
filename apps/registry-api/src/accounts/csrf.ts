import type { RequestHandler } from 'express';
import { forbidden } from '../http/api-error.js';

// CSRF protection for cookie-authenticated writes (OWASP's "verify origin with standard headers"):
// a write that carries a session cookie and no Authorization header must come from a trusted origin.
// Browsers send Origin on every cross-origin write and Sec-Fetch-Site on every request, so a forged
// cross-site form or fetch is refused; a non-browser client sends neither. SameSite=Lax session cookies
// are the second layer. better-auth checks its own endpoints under /api/auth the same way.
// A page that sends no referrer (the CLI sign-in, an MCP client's consent) makes the browser send
// `Origin: null` even on its own form post: then Sec-Fetch-Site, which no page can set, must say
// same-origin.

const SAFE = new Set(['GET', 'HEAD', 'OPTIONS']);

/** Whether a cookie-carrying write comes from a trusted page, by its Origin and Sec-Fetch-Site. */
function fromTrustedPage(origin: string | undefined, site: unknown, trusted: ReadonlySet<string>): boolean {
  if (origin === 'null') return site === 'same-origin';
  if (origin !== undefined) return trusted.has(origin);
  return site === undefined || site === 'same-origin';
}

export function csrfGuard(trustedOrigins: readonly string[]): RequestHandler {
  const trusted = new Set(trustedOrigins);
  return (req, _res, next) => {
    if (SAFE.has(req.method)) return next();
    if (req.headers.authorization !== undefined) return next();
    if (!req.headers.cookie?.includes('pkgreg.session_token')) return next();
    if (fromTrustedPage(req.headers.origin, req.headers['sec-fetch-site'], trusted)) return next();
    next(forbidden('Cross-site request refused: a signed-in write must come from the registry web UI'));
  };
}
