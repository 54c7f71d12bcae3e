import express, { type Request, type RequestHandler, Router } from 'express';
import { oversizedBody } from '../http/body.js';
import type { WindowLimiter } from '../http/window-limiter.js';
import { packageKeyFromParams } from '../packages/package-path.js';
import { deprecate, undeprecate, unyank, yank } from './owner.service.js';
import { bearerToken } from './proof.js';
import {
  getPublishRun,
  type PublishingDeps,
  publish,
  receiveWebhook,
  takeLimit,
  WEBHOOK_PATH,
} from './publishing.service.js';

// The publishing surface (docs/publishing.md, the OpenAPI document): publish and its runs, GitHub's
// webhook, and the owners' deprecate/yank. Bodies are JSON (the app's parser) except the webhook's,
// whose signature covers the raw bytes.

/** Largest webhook delivery read (GitHub caps payloads at 25 MB; pushes the registry reads are far smaller). */
const WEBHOOK_BODY_LIMIT_BYTES = 2 * 1024 * 1024;

// req.ip is the client as far as TRUST_PROXY's hops say (env.ts); an untrusted peer's X-Forwarded-For is ignored.
const clientAddress = (req: Request) => req.ip ?? req.socket.remoteAddress ?? 'unknown';

/** Counts the request against the client address's limit, before anything else is read or asked. */
function limitPerAddress(limiter: WindowLimiter, message: string): RequestHandler {
  return async (req, _res, next) => {
    await takeLimit(limiter, clientAddress(req), message);
    next();
  };
}

/** POST /api/hooks/github, mounted before the JSON parser: the HMAC is over the bytes as sent. */
export function webhookRoutes(deps: PublishingDeps): Router {
  const router = Router();
  router.post(
    WEBHOOK_PATH,
    limitPerAddress(deps.limits.webhookAddress, 'Too many webhook deliveries from this address'),
    (req, res, next) => next(oversizedBody(req, res, WEBHOOK_BODY_LIMIT_BYTES)),
    express.raw({ type: () => true, limit: WEBHOOK_BODY_LIMIT_BYTES }),
    async (req, res) => {
      const header = (name: string) => {
        const value = req.headers[name];
        return Array.isArray(value) ? value[0] : value;
      };
      const answer = await receiveWebhook(deps, {
        event: header('x-github-event'),
        signature: header('x-hub-signature-256'),
        contentType: header('content-type'),
        deliveryId: header('x-github-delivery'),
        rawBody: Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0),
      });
      res.status(answer.status).json(answer.body);
    },
  );
  return router;
}

export function publishingRoutes(deps: PublishingDeps): Router {
  const router = Router();
  const owner = { db: deps.db, proofs: deps.proofs };
  // Each of these asks the code host (or the OIDC issuer) to check a proof: counted per address first.
  const limited = limitPerAddress(
    deps.limits.publish,
    'Too many publishes and owner actions from this address',
  );
  const pkg = '/api/packages/:scope/:name';
  router.post('/api/publish', limited);
  router.put(`${pkg}/deprecation`, limited);
  router.delete(`${pkg}/deprecation`, limited);
  router.put(`${pkg}/versions/:version/yank`, limited);
  router.delete(`${pkg}/versions/:version/yank`, limited);

  router.post('/api/publish', async (req, res) => {
    const token = bearerToken(req.headers.authorization);
    res.status(202).json(await publish(deps, token, req.body));
  });

  router.get('/api/publish/:runId', async (req, res) => {
    res.set('Cache-Control', 'no-store');
    res.json(await getPublishRun(deps.db, req.params.runId));
  });

  router.put(`${pkg}/deprecation`, async (req, res) => {
    const key = packageKeyFromParams(req.params);
    res.json(await deprecate(owner, bearerToken(req.headers.authorization), key, req.body));
  });
  router.delete(`${pkg}/deprecation`, async (req, res) => {
    const key = packageKeyFromParams(req.params);
    res.json(await undeprecate(owner, bearerToken(req.headers.authorization), key));
  });
  router.put(`${pkg}/versions/:version/yank`, async (req, res) => {
    const key = packageKeyFromParams(req.params);
    res.json(await yank(owner, bearerToken(req.headers.authorization), key, req.params.version, req.body));
  });
  router.delete(`${pkg}/versions/:version/yank`, async (req, res) => {
    const key = packageKeyFromParams(req.params);
    res.json(await unyank(owner, bearerToken(req.headers.authorization), key, req.params.version));
  });
  return router;
}
