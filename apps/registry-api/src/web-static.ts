import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { WEB_CONTENT_SECURITY_POLICY } from '@pkgreg/contracts';
import express, { type Router } from 'express';

// Serves the built web UI (apps/web/dist) next to the API, so production is one origin and the UI needs
// no CORS. Owned by the web app (issue 7); app.ts mounts it last, after every API route.

/** apps/web/dist, found from this file's place (src/ under vitest, dist/ when built). */
export const DEFAULT_WEB_DIST_DIR = fileURLToPath(new URL('../../web/dist', import.meta.url));

/** Paths the SPA never answers: the API, health checks, metrics, and anything that looks like a file. */
function isSpaRoute(urlPath: string): boolean {
  if (urlPath === '/api' || urlPath.startsWith('/api/')) return false;
  // `/metrics` is served on the operator port only (METRICS_PORT): here it is the API's 404.
  if (urlPath === '/healthz' || urlPath === '/readyz' || urlPath === '/metrics') return false;
  return !path.posix.basename(urlPath).includes('.') || urlPath.startsWith('/@');
}

// The UI renders untrusted SKILL.md (after DOMPurify); its CSP (@pkgreg/contracts) is the second wall.
function setSecurityHeaders(res: express.Response): void {
  res.setHeader('Content-Security-Policy', WEB_CONTENT_SECURITY_POLICY);
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Referrer-Policy', 'strict-origin-when-cross-origin');
  res.setHeader('X-Frame-Options', 'DENY');
}

/**
 * Static files of the built UI with an SPA fallback (index.html) for GET/HEAD of non-/api paths.
 * Without a build (API-only deployments, most tests) it is an empty router.
 */
export function webStatic(options: { distDir?: string } = {}): Router {
  const distDir = options.distDir ?? DEFAULT_WEB_DIST_DIR;
  const router = express.Router();
  const indexHtml = path.join(distDir, 'index.html');
  if (!existsSync(indexHtml)) return router;

  router.use(
    express.static(distDir, {
      index: false,
      redirect: false,
      setHeaders(res, filePath) {
        setSecurityHeaders(res as express.Response);
        // Vite fingerprints everything under assets/: cache it for good; the rest must revalidate.
        const immutable = filePath.startsWith(path.join(distDir, 'assets') + path.sep);
        res.setHeader('Cache-Control', immutable ? 'public, max-age=31536000, immutable' : 'no-cache');
      },
    }),
  );

  router.use((req, res, next) => {
    if ((req.method !== 'GET' && req.method !== 'HEAD') || !isSpaRoute(req.path)) {
      next();
      return;
    }
    setSecurityHeaders(res);
    res.setHeader('Cache-Control', 'no-cache');
    res.sendFile(indexHtml, (error) => {
      if (error && !res.headersSent) next(error);
    });
  });
  return router;
}
