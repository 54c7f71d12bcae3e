import express, { type Request, type RequestHandler } from 'express';
import { hasCredentials, isOwnBearer, type ViewerOf } from '../accounts/viewer.js';
import { oversizedBody } from '../http/body.js';
import type { WindowLimiter } from '../http/window-limiter.js';
import { packageKeyFromParams } from '../packages/package-path.js';
import type { RegistryHandlers } from '../routes/route-table.js';
import { deprecate, type OwnerCredentials, undeprecate, unyank, yank } from './owner.service.js';
import { bearerToken } from './proof.js';
import {
  getPublishRun,
  type PublishingDeps,
  publish,
  receiveWebhook,
  takeLimit,
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

/**
 * Publishing's routes: the webhook reads its raw body (the HMAC is over the bytes as sent); the others
 * take JSON, parsed before the per-address limit as for every JSON route.
 */
export function publishingRoutes(
  deps: PublishingDeps,
  viewerOf: ViewerOf,
): Pick<
  RegistryHandlers,
  'github-webhook' | 'publish' | 'publish-run' | 'deprecate' | 'undeprecate' | 'yank' | 'unyank'
> {
  const owner = { db: deps.db, proofs: deps.proofs };
  // Each of these asks the code host (or the OIDC issuer) to check a proof: counted per address first.
  const limited = limitPerAddress(
    deps.limits.publish,
    'Too many publishes and owner actions from this address',
  );
  /**
   * pkgreg credentials (a `pkgreg_` token, an MCP edge delegation, or a session cookie with no
   * Authorization) go the account's way; any other bearer is a code-host proof.
   */
  const ownerCredentials = async (req: Request): Promise<OwnerCredentials> => {
    const auth = req.headers.authorization;
    const ours = auth === undefined || isOwnBearer(auth);
    if (ours && hasCredentials(req)) {
      const viewer = await viewerOf(req);
      if (viewer.kind === 'account') return { kind: 'account', viewer };
    }
    return { kind: 'proof', token: bearerToken(req.headers.authorization) };
  };
  const webhook: RequestHandler = async (req, res) => {
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
  };
  return {
    'github-webhook': [
      limitPerAddress(deps.limits.webhookAddress, 'Too many webhook deliveries from this address'),
      (req, res, next) => next(oversizedBody(req, res, WEBHOOK_BODY_LIMIT_BYTES)),
      express.raw({ type: () => true, limit: WEBHOOK_BODY_LIMIT_BYTES }),
      webhook,
    ],
    publish: [
      limited,
      async (req, res) => {
        const token = bearerToken(req.headers.authorization);
        res.status(202).json(await publish(deps, token, req.body));
      },
    ],
    'publish-run': async (req, res) => {
      res.set('Cache-Control', 'no-store');
      res.json(await getPublishRun(deps.db, req.params.runId));
    },
    deprecate: [
      limited,
      async (req, res) => {
        const key = packageKeyFromParams(req.params);
        res.json(await deprecate(owner, await ownerCredentials(req), key, req.body));
      },
    ],
    undeprecate: [
      limited,
      async (req, res) => {
        const key = packageKeyFromParams(req.params);
        res.json(await undeprecate(owner, await ownerCredentials(req), key));
      },
    ],
    yank: [
      limited,
      async (req, res) => {
        const key = packageKeyFromParams(req.params);
        const version = req.params.version;
        res.json(await yank(owner, await ownerCredentials(req), key, version, req.body));
      },
    ],
    unyank: [
      limited,
      async (req, res) => {
        const key = packageKeyFromParams(req.params);
        res.json(await unyank(owner, await ownerCredentials(req), key, req.params.version));
      },
    ],
  };
}
