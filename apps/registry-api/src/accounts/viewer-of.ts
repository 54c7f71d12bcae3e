import { hash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import {
  type AccessTokenRow,
  type Auth,
  accessOfAccount,
  admitToken,
  findPresentedToken,
  TOKEN_REFUSAL_MESSAGES,
  type TokenRefusal,
} from '@pkgreg/accounts';
import type { Db } from '@pkgreg/db';
import { isAPIError } from 'better-auth/api';
import { fromNodeHeaders } from 'better-auth/node';
import { clientAddress, type TrustProxy } from '../downloads/client-address.js';
import { unauthorized } from '../http/api-error.js';
import type { AccessCache } from './access-cache.js';
import { type DelegationVerifier, delegationBearerOf } from './delegation-assertion.js';
import { type AccountViewer, ANONYMOUS, hasCredentials, type Viewer, type ViewerOf } from './viewer.js';

// The request's viewer from its credentials (docs/accounts.md, "Tokens" and "Sessions"):
// - `Authorization: Bearer pkgreg_…`: an access token, checked on every request (hash lookup, expiry,
//   revocation, suspension, address ranges): a refused one is a 401 whatever the route;
// - `Authorization: Bearer <JWT typed pkgreg-delegation+jwt>`: the MCP edge reading as a person for an
//   app the person allowed (delegation-assertion.ts), read only; the assertion and the delegation are
//   checked on every request, and anything wrong is one 401;
// - a session cookie: better-auth's session; a stale or unknown cookie is anonymous, as a browser keeps
//   cookies the registry has forgotten;
// - anything else (including a code-host proof on publishing routes): anonymous here.
// What a token is and what an account reaches are read from the database and kept by the access cache
// until any access changes (access-cache.ts); expiry and address ranges are checked on every request.

/** What a presented token resolves to: its row and viewer, or why it is refused. */
type TokenResolution =
  | { ok: true; token: AccessTokenRow; siteAdmin: boolean; viewer: AccountViewer }
  | { ok: false; refusal: TokenRefusal };

const BEARER_TOKEN = /^bearer\s+(pkgreg_\S*)\s*$/i;

/**
 * Where the access cache keeps what a presented token resolves to: its SHA-256, never the token (the
 * one-shot hash: no Hash object on every authenticated request).
 */
export const tokenCacheKey = (presented: string) => `token:${hash('sha256', presented, 'base64')}`;

export function createViewerOf(deps: {
  db: Db;
  auth: Auth;
  trust: TrustProxy;
  cache: AccessCache;
  /** The MCP edge's delegation assertions. */
  delegations: DelegationVerifier;
}): ViewerOf {
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

  function resolve(req: IncomingMessage): Promise<Viewer> {
    const bearer = BEARER_TOKEN.exec(req.headers.authorization ?? '');
    if (!bearer?.[1]) {
      const assertion = delegationBearerOf(req.headers.authorization);
      return assertion === undefined ? sessionViewer(req) : delegationViewer(assertion);
    }
    const presented = bearer[1];
    // A kept token is answered without waiting on anything: most authenticated reads end here.
    const kept = deps.cache.peek<TokenResolution>(tokenCacheKey(presented));
    if (kept) return admitted(kept, req);
    return tokenViewer(presented).then((found) => admitted(found, req));
  }

  /** The token's viewer if it may be used now from this request's address, else its 401. */
  function admitted(found: TokenResolution, req: IncomingMessage): Promise<Viewer> {
    if (!found.ok) return Promise.reject(unauthorized(TOKEN_REFUSAL_MESSAGES[found.refusal]));
    const refusal = admitToken(deps.db, found.token, clientAddress(req, deps.trust));
    if (refusal) return Promise.reject(unauthorized(TOKEN_REFUSAL_MESSAGES[refusal]));
    return Promise.resolve(found.viewer);
  }

  async function sessionViewer(req: IncomingMessage): Promise<Viewer> {
    const session = await sessionOf(req);
    if (!session) return ANONYMOUS;
    const accountId = session.user.id;
    const access = await deps.cache.get(`account:${accountId}`, () => accessOfAccount(deps.db, accountId));
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

  /** The person an app reads as through the MCP edge: what the account reaches, read only. */
  async function delegationViewer(assertion: string): Promise<Viewer> {
    const { accountId } = await deps.delegations.verify(assertion);
    const access = await deps.cache.get(`account:${accountId}`, () => accessOfAccount(deps.db, accountId));
    return {
      kind: 'account',
      accountId,
      via: 'delegation',
      permission: 'read',
      read: access.read,
      access,
      siteAdmin: false,
    } satisfies AccountViewer;
  }

  /** A presented token's row and viewer (kept while valid), or why it is refused. */
  function tokenViewer(presented: string): Promise<TokenResolution> {
    return deps.cache.get<TokenResolution>(
      tokenCacheKey(presented),
      async () => {
        const check = await findPresentedToken(deps.db, presented);
        if (!check.ok) return check;
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
        return { ...check, viewer };
      },
      (check) => check.ok,
    );
  }

  return viewerOf;
}
