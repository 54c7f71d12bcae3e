import { randomUUID } from 'node:crypto';
import { ALL_SCOPES } from '@pkgreg/contracts';
import type { Db } from '@pkgreg/db';
import { SignJWT } from 'jose';
import { authenticateClient } from './clients.service.js';
import { type KeyStore, SIGNING_ALG } from './signing-keys.service.js';

/** An RFC 6749 §5.2 error; the route writes it as `{error, error_description}`. */
export class OAuthError extends Error {
  constructor(
    readonly error:
      | 'invalid_request'
      | 'invalid_client'
      | 'invalid_scope'
      | 'invalid_target'
      | 'unsupported_grant_type'
      | 'unauthorized_client',
    message: string,
  ) {
    super(message);
  }
  get status(): number {
    return this.error === 'invalid_client' ? 401 : 400;
  }
}

export interface TokenRequest {
  grantType: string | undefined;
  clientId: string;
  clientSecret: string;
  /** Space-separated scopes the client asked for, if any. */
  scope: string | undefined;
  /** RFC 8707 resource indicators. */
  resources: string[];
}

export interface IssuerContext {
  issuer: string;
  resource: string;
  ttlSeconds: number;
}

/** client_credentials: authenticate, narrow the scope, sign a short-lived JWT for the MCP resource. */
export async function issueToken(db: Db, keyStore: KeyStore, ctx: IssuerContext, req: TokenRequest) {
  if (req.grantType !== 'client_credentials') {
    throw new OAuthError('unsupported_grant_type', 'only client_credentials is supported');
  }
  // Trailing slashes aside, the only resource this server issues tokens for is the MCP endpoint.
  const strip = (u: string) => u.replace(/\/+$/, '');
  if (req.resources.some((r) => strip(r) !== strip(ctx.resource))) {
    throw new OAuthError('invalid_target', `resource must be ${ctx.resource}`);
  }
  const client = await authenticateClient(db, req.clientId, req.clientSecret);
  if (!client) throw new OAuthError('invalid_client', 'client authentication failed');

  const requested = req.scope?.split(' ').filter(Boolean) ?? [];
  const unknown = requested.filter((s) => !ALL_SCOPES.includes(s as (typeof ALL_SCOPES)[number]));
  if (unknown.length) throw new OAuthError('invalid_scope', `unknown scope: ${unknown.join(' ')}`);
  const granted = requested.length
    ? requested.filter((s) => client.allowedScopes.includes(s))
    : client.allowedScopes;
  if (!granted.length) throw new OAuthError('invalid_scope', 'none of the requested scopes is allowed');
  const scope = [...new Set(granted)].join(' ');

  const { kid, key } = await keyStore.signingKey();
  const accessToken = await new SignJWT({ scope, client_id: client.clientId })
    .setProtectedHeader({ alg: SIGNING_ALG, kid, typ: 'at+jwt' })
    .setIssuer(ctx.issuer)
    .setAudience(ctx.resource)
    .setSubject(client.clientId)
    .setIssuedAt()
    .setExpirationTime(`${ctx.ttlSeconds}s`)
    .setJti(randomUUID())
    .sign(key);
  return { access_token: accessToken, token_type: 'Bearer', expires_in: ctx.ttlSeconds, scope };
}
