import { McpConsentFormSchema } from '@pkgreg/contracts';
import type { Db } from '@pkgreg/db';
import express, { type Request, type Response } from 'express';
import { forbidden, notFound, unauthorized } from '../http/api-error.js';
import { requestIdOf } from '../http/request-id.js';
import { parseBody } from '../http/validate.js';
import type { RegistryHandlers } from '../routes/route-table.js';
import { sendMcpConsentPage } from './mcp-consent.page.js';
import { claimRequest, type Decided, decide, edgeReturnUrl, isRemembered } from './mcp-consent.service.js';
import { sessionPerson } from './personal-session.js';
import type { ViewerOf } from './viewer.js';

// Consent for MCP clients (docs/accounts.md), the registry's half of an agent app's OAuth sign-in to the
// edge, built as the CLI's browser sign-in is (cli-login.routes.ts):
// 1. GET /api/mcp/consent/{id}: the edge sent the browser here; the signed-in person claims the request
//    and is asked (or, having allowed this app as much before, is not asked again);
// 2. POST /api/mcp/consent/{id}: their decision, with the session cookie; a 303 back to the edge with a
//    one-time code the edge checks before it finishes the authorization.
// Only a session (a person in a browser) decides: a request with Authorization never does. A request
// unknown, expired, used or claimed by another account gets one and the same page, so none of those can
// be told apart.

export interface McpConsentRoutesDeps {
  db: Db;
  viewerOf: ViewerOf;
  /** Where the web UI is (its /sign-in page and its connected apps). */
  webOrigin: string;
  /** EDGE_PUBLIC_BASE_URL: where decisions go; unset, both routes answer 404. */
  edgeBaseUrl: string | undefined;
  devSignIn: boolean;
}

type Handlers = Pick<RegistryHandlers, 'mcp-consent-page' | 'mcp-consent'>;

export function mcpConsentRoutes(deps: McpConsentRoutesDeps): Handlers {
  /** The signed-in person of a browser: a session cookie, never a request with any Authorization. */
  const browserPerson = (req: Request) =>
    req.headers.authorization === undefined ? sessionPerson(deps.db, deps.viewerOf, req) : undefined;

  /** The edge's base URL; without one consent is off and its routes are missing. */
  function edgeBaseUrl(): string {
    if (!deps.edgeBaseUrl) throw notFound('Not found');
    return deps.edgeBaseUrl;
  }

  const unknown = (res: Response) => sendMcpConsentPage(res, { kind: 'unknown' }, 404);

  function toEdge(res: Response, edge: string, decided: Decided) {
    res.setHeader('Referrer-Policy', 'no-referrer');
    res.redirect(303, edgeReturnUrl(edge, decided));
  }

  return {
    'mcp-consent-page': async (req, res) => {
      const edge = edgeBaseUrl();
      const { id } = req.params;
      const person = await browserPerson(req);
      if (!person) {
        // A path: the web UI's sign-in follows only paths of its own site (and proxies /api in development).
        const next = `/api/mcp/consent/${encodeURIComponent(id)}`;
        sendMcpConsentPage(res, {
          kind: 'sign-in',
          signInUrl: `${deps.webOrigin}/sign-in?next=${encodeURIComponent(next)}`,
          devSignIn: deps.devSignIn,
        });
        return;
      }
      const request = await claimRequest(deps.db, id, person.accountId);
      if (!request) return unknown(res);
      if (await isRemembered(deps.db, person.accountId, request, edge)) {
        const decided = await decide(deps.db, {
          id,
          accountId: person.accountId,
          decision: 'allow',
          requestId: requestIdOf(res),
        });
        return decided ? toEdge(res, edge, decided) : unknown(res);
      }
      sendMcpConsentPage(res, {
        kind: 'consent',
        request,
        id,
        email: person.email,
        webOrigin: deps.webOrigin,
        edgeResource: `${edge}/mcp`,
      });
    },
    'mcp-consent': [
      express.urlencoded({ extended: false, limit: '4kb' }),
      async (req, res) => {
        // A browser's form never carries Authorization; a token may not let an app act as anyone.
        if (req.headers.authorization !== undefined)
          throw forbidden('An app is allowed in a browser, signed in, not with a token');
        const person = await browserPerson(req);
        if (!person) throw unauthorized('Sign in to answer the app');
        const edge = edgeBaseUrl();
        const { decision } = parseBody(McpConsentFormSchema, req.body ?? {});
        const decided = await decide(deps.db, {
          id: req.params.id,
          accountId: person.accountId,
          decision,
          requestId: requestIdOf(res),
        });
        // Deny goes back to the edge too: it answers the app with access_denied.
        return decided ? toEdge(res, edge, decided) : unknown(res);
      },
    ],
  };
}
