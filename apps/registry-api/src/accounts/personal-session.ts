import type { IncomingMessage } from 'node:http';
import type { Auth } from '@pkgreg/accounts';
import type { Db } from '@pkgreg/db';
import { fromNodeHeaders } from 'better-auth/node';
import { forbidden, unauthorized } from '../http/api-error.js';
import { isOwnBearer, type ViewerOf } from './viewer.js';

/**
 * The request's better-auth session (the cookie, or the CLI's device-flow bearer), for what only a person
 * manages (sessions, connected apps): a pkgreg token, however wide, or an app's delegation through the
 * MCP edge is a 403; no session a 401. `what` names it in the refusals ("Sessions").
 */
export async function personalSession(
  auth: Auth,
  req: IncomingMessage,
  what: string,
): Promise<{ id: string; userId: string }> {
  if (isOwnBearer(req.headers.authorization ?? '')) {
    throw forbidden(`${what} are managed while signed in, not with a token`);
  }
  const found = await auth.api.getSession({ headers: fromNodeHeaders(req.headers) }).catch(() => null);
  if (!found) throw unauthorized(`Sign in to manage ${what.toLowerCase()}`);
  return { id: found.session.id, userId: found.user.id };
}

/**
 * The person signed in with a session (a browser's cookie, or the CLI's device-flow bearer) and their
 * email, for the registry's own pages where a person approves something; undefined for anyone else.
 */
export async function sessionPerson(
  db: Db,
  viewerOf: ViewerOf,
  req: IncomingMessage,
): Promise<{ accountId: string; email: string } | undefined> {
  const viewer = await viewerOf(req);
  if (viewer.kind === 'anonymous' || viewer.via !== 'session') return undefined;
  const user = await db
    .selectFrom('auth_user')
    .select('email')
    .where('id', '=', viewer.accountId)
    .executeTakeFirstOrThrow();
  return { accountId: viewer.accountId, email: user.email };
}
