import type { IncomingMessage } from 'node:http';
import type { AccountAccess } from '@pkgreg/accounts';
import { PUBLIC_ONLY, type ReadAccess } from '@pkgreg/registry';
import { delegationBearerOf } from './delegation-assertion.js';

// Who is asking (docs/accounts.md): anyone, or an account through its session cookie, one of its
// access tokens, or the MCP edge reading as it for an app it allowed (a delegation). Resolved once per request by `ViewerOf`, which throws a 401 ApiError for credentials
// that do not verify (bad, expired, revoked, from an address the token does not allow), so a handler
// only ever sees a viewer it can trust.

export interface AnonymousViewer {
  kind: 'anonymous';
  read: ReadAccess;
}

export interface AccountViewer {
  kind: 'account';
  accountId: string;
  /**
   * How the account authenticated: a session cookie (web UI), an access token (CLI, CI), or the MCP
   * edge's delegation assertion (an app the person allowed, reading through the edge: read only).
   */
  via: 'session' | 'token' | 'delegation';
  /** The token's id, when `via` is 'token'. */
  tokenId?: string;
  /**
   * A read token and a delegation may only read; a session and a publish token may also write what
   * roles allow.
   */
  permission: 'read' | 'publish';
  /** Private packages this viewer sees: its memberships, narrowed by the token's limits. */
  read: ReadAccess;
  /** The scopes it reaches and its role in each (after the token's limits). */
  access: AccountAccess;
  /** A site administrator (named by the operator). */
  siteAdmin: boolean;
}

export type Viewer = AnonymousViewer | AccountViewer;

export const ANONYMOUS: AnonymousViewer = Object.freeze({ kind: 'anonymous', read: PUBLIC_ONLY });

/** Resolves the request's viewer; rejects with a 401 ApiError when its credentials do not verify. */
export type ViewerOf = (req: IncomingMessage) => Promise<Viewer>;

/**
 * True when an Authorization header holds a bearer of ours: a `pkgreg_` token, or a JWT typed as the
 * edge's delegation assertion (or as an access token, to be refused). Any other bearer is a publishing
 * proof (a CI OIDC token, a code-host token).
 */
export function isOwnBearer(authorization: string): boolean {
  return /^bearer\s+pkgreg_/i.test(authorization) || delegationBearerOf(authorization) !== undefined;
}

/** True when the request carries credentials of ours: a session cookie or a bearer of ours. */
export function hasCredentials(req: IncomingMessage): boolean {
  const auth = req.headers.authorization;
  if (auth !== undefined && isOwnBearer(auth)) return true;
  const cookie = req.headers.cookie;
  return cookie?.includes('pkgreg.session_token') === true;
}
