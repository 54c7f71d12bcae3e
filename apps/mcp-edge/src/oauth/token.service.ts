import { randomUUID } from 'node:crypto';
import { ALL_SCOPES, deriveNamespace } from '@pkgreg/contracts';
import type { Db } from '@pkgreg/db';
import { SignJWT } from 'jose';
import type { Access } from '../admission/access.js';
import type { BackendResolver } from '../admission/backends.js';
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
  /** The public base's MCP resource, `{base}/mcp`: a token's audience when it names none. */
  resource: string;
  ttlSeconds: number;
  /** Each host's backend and resource: a tenant's or tunnel session's host is a resource of its own. */
  resolver: BackendResolver;
  /** Which clients each tenant and tunnel session serves. */
  access: Access;
}

/**
 * The audiences of a token for `resources` (RFC 8707), each an MCP resource this edge serves to the
 * client: the base's, or the host of a tenant or tunnel session that names the client. One it does not
 * serve to this client is refused in the same words whether its host exists or not.
 */
async function audiencesFor(ctx: IssuerContext, resources: string[], namespace: string): Promise<string[]> {
  if (!resources.length) return [ctx.resource];
  // A fresh read: a token request follows a grant closely, and costs a scrypt anyway.
  const state = await ctx.access.current(0);
  const audiences = new Set<string>();
  for (const requested of resources) {
    let host: string | undefined;
    try {
      host = new URL(requested).host;
    } catch {
      host = undefined;
    }
    const resolved = host ? ctx.resolver.resolve(host) : undefined;
    // Trailing slashes aside, the resource must be exactly the one its host serves (scheme, port, path).
    if (
      !resolved ||
      requested.replace(/\/+$/, '') !== resolved.resource ||
      !state.allows(resolved.backend, namespace)
    ) {
      throw new OAuthError('invalid_target', 'resource is not an MCP resource this client may use');
    }
    audiences.add(resolved.resource);
  }
  return [...audiences];
}

/** client_credentials: authenticate, narrow the scope, sign a short-lived JWT for the MCP resource(s). */
export async function issueToken(db: Db, keyStore: KeyStore, ctx: IssuerContext, req: TokenRequest) {
  if (req.grantType !== 'client_credentials') {
    throw new OAuthError('unsupported_grant_type', 'only client_credentials is supported');
  }
  // The client first: whether a resource is served to it is for its eyes only.
  const client = await authenticateClient(db, req.clientId, req.clientSecret);
  if (!client) throw new OAuthError('invalid_client', 'client authentication failed');
  const audiences = await audiencesFor(ctx, req.resources, deriveNamespace(ctx.issuer, client.clientId));

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
    .setAudience(audiences.length === 1 ? (audiences[0] as string) : audiences)
    .setSubject(client.clientId)
    .setIssuedAt()
    .setExpirationTime(`${ctx.ttlSeconds}s`)
    .setJti(randomUUID())
    .sign(key);
  return { access_token: accessToken, token_type: 'Bearer', expires_in: ctx.ttlSeconds, scope };
}
