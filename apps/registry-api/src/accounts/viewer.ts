import type { IncomingMessage } from 'node:http';
import type { AccountAccess } from '@pkgreg/accounts';
import { PUBLIC_ONLY, type ReadAccess } from '@pkgreg/registry';

// Who is asking (docs/accounts.md): anyone, or an account through its session cookie or one of its
// access tokens. Resolved once per request by `ViewerOf`, which throws a 401 ApiError for credentials
// that do not verify (bad, expired, revoked, from an address the token does not allow), so a handler
// only ever sees a viewer it can trust.

export interface AnonymousViewer {
  kind: 'anonymous';
  read: ReadAccess;
}

export interface AccountViewer {
  kind: 'account';
  accountId: string;
  /** How the account authenticated: a session cookie (web UI) or an access token (CLI, CI). */
  via: 'session' | 'token';
  /** The token's id, when `via` is 'token'. */
  tokenId?: string;
  /** A token may only read; a session and a publish token may also write what roles allow. */
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

/** True when the request carries credentials of ours (a session cookie or a `pkgreg_` token). */
export function hasCredentials(req: IncomingMessage): boolean {
  const auth = req.headers.authorization;
  if (auth !== undefined && /^bearer\s+pkgreg_/i.test(auth)) return true;
  const cookie = req.headers.cookie;
  return cookie?.includes('pkgreg.session_token') === true;
}
