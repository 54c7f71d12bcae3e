import type { RequestHandler } from 'express';
import { forbidden } from '../http/api-error.js';

// CSRF protection for cookie-authenticated writes (OWASP's "verify origin with standard headers"):
// a write that carries a session cookie and no Authorization header must come from a trusted origin.
// Browsers send Origin on every cross-origin write and Sec-Fetch-Site on every request, so a forged
// cross-site form or fetch is refused; a non-browser client sends neither. SameSite=Lax session cookies
// are the second layer. better-auth checks its own endpoints under /api/auth the same way.

const SAFE = new Set(['GET', 'HEAD', 'OPTIONS']);

export function csrfGuard(trustedOrigins: readonly string[]): RequestHandler {
  const trusted = new Set(trustedOrigins);
  return (req, _res, next) => {
    if (SAFE.has(req.method)) return next();
    if (req.headers.authorization !== undefined) return next();
    if (!req.headers.cookie?.includes('pkgreg.session_token')) return next();
    const origin = req.headers.origin;
    const site = req.headers['sec-fetch-site'];
    if (origin !== undefined ? trusted.has(origin) : site === undefined || site === 'same-origin')
      return next();
    next(forbidden('Cross-site request refused: a signed-in write must come from the registry web UI'));
  };
}
