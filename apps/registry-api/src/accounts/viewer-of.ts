import type { IncomingMessage } from 'node:http';
import { type Auth, accessOfAccount, TOKEN_REFUSAL_MESSAGES, verifyToken } from '@pkgreg/accounts';
import type { Db } from '@pkgreg/db';
import { isAPIError } from 'better-auth/api';
import { fromNodeHeaders } from 'better-auth/node';
import { clientAddress, type TrustProxy } from '../downloads/client-address.js';
import { unauthorized } from '../http/api-error.js';
import { type AccountViewer, ANONYMOUS, hasCredentials, type Viewer, type ViewerOf } from './viewer.js';

// The request's viewer from its credentials (docs/accounts.md, "Tokens" and "Sessions"):
// - `Authorization: Bearer pkgreg_…`: an access token, checked on every request (hash lookup, expiry,
//   revocation, suspension, address ranges): a refused one is a 401 whatever the route;
// - a session cookie: better-auth's session; a stale or unknown cookie is anonymous, as a browser keeps
//   cookies the registry has forgotten;
// - anything else (including a code-host proof on publishing routes): anonymous here.
// What the viewer reaches is computed from its memberships on every request, never kept.

const BEARER_TOKEN = /^bearer\s+(pkgreg_\S*)\s*$/i;

export function createViewerOf(deps: { db: Db; auth: Auth; trust: TrustProxy }): ViewerOf {
  // Once per request, however many handlers ask.
  const resolved = new WeakMap<IncomingMessage, Promise<Viewer>>();
  const viewerOf: ViewerOf = (req) => {
    if (!hasCredentials(req)) return Promise.resolve(ANONYMOUS);
    let viewer = resolved.get(req);
    if (!viewer) {
      viewer = resolve(req);
      resolved.set(req, viewer);
    }
    return viewer;
  };

  async function sessionOf(req: IncomingMessage) {
    try {
      return await deps.auth.api.getSession({ headers: fromNodeHeaders(req.headers) });
    } catch (error) {
      // A cookie that does not verify (forged, or signed with a rotated secret) is no session.
      if (isAPIError(error)) return null;
      throw error;
    }
  }

  async function resolve(req: IncomingMessage): Promise<Viewer> {
    const bearer = BEARER_TOKEN.exec(req.headers.authorization ?? '');
    if (bearer?.[1]) {
      const check = await verifyToken(deps.db, bearer[1], clientAddress(req, deps.trust));
      if (!check.ok) throw unauthorized(TOKEN_REFUSAL_MESSAGES[check.refusal]);
      const { token } = check;
      const access = await accessOfAccount(deps.db, token.account_id, {
        organizations: token.organizations,
        scopes: token.scopes,
        packages: token.packages,
      });
      const viewer: AccountViewer = {
        kind: 'account',
        accountId: token.account_id,
        via: 'token',
        tokenId: token.id,
        permission: token.permission,
        read: access.read,
        access,
        siteAdmin: check.siteAdmin,
      };
      return viewer;
    }
    const session = await sessionOf(req);
    if (!session) return ANONYMOUS;
    const access = await accessOfAccount(deps.db, session.user.id);
    return {
      kind: 'account',
      accountId: session.user.id,
      via: 'session',
      permission: 'publish',
      read: access.read,
      access,
      siteAdmin: (session.user as { role?: string | null }).role === 'admin',
    } satisfies AccountViewer;
  }

  return viewerOf;
}
