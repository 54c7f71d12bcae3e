import { ALL_SCOPES, RejectError } from '@pkgreg/contracts';
import type { Db } from '@pkgreg/db';
import express, { type Request, type Response } from 'express';
import type { Access } from '../admission/access.js';
import type { BackendResolver } from '../admission/backends.js';
import type { Limiter } from '../admission/limits.js';
import { EDGE_CACHE_CONTROL, type EdgeHandlers } from '../routes/route-table.js';
import type { KeyStore } from './signing-keys.service.js';
import { type IssuerContext, issueToken, OAuthError, type TokenRequest } from './token.service.js';

export interface OAuthUrls {
  issuer: string;
  resource: string;
  tokenEndpoint: string;
  jwksUri: string;
  authorizationEndpoint: string;
  registrationEndpoint: string;
  revocationEndpoint: string;
  resourceMetadata: string;
}

/** Every OAuth URL hangs off PKGREG_PUBLIC_BASE_URL (decisions.md: issuer `{base}/mcp`). */
export function oauthUrls(base: string): OAuthUrls {
  return {
    issuer: `${base}/mcp`,
    resource: `${base}/mcp`,
    tokenEndpoint: `${base}/mcp/token`,
    jwksUri: `${base}/mcp/jwks.json`,
    authorizationEndpoint: `${base}/mcp/authorize`,
    registrationEndpoint: `${base}/mcp/register`,
    revocationEndpoint: `${base}/mcp/revoke`,
    resourceMetadata: `${base}/.well-known/oauth-protected-resource/mcp`,
  };
}

function formDecode(value: string): string {
  return decodeURIComponent(value.replaceAll('+', ' '));
}

/** client_secret_basic (RFC 6749 §2.3.1: id and secret form-encoded inside Basic) or client_secret_post. */
function clientCredentials(req: Request): { clientId: string; clientSecret: string } {
  const header = req.headers.authorization;
  const body = (req.body ?? {}) as Record<string, unknown>;
  const postId = typeof body.client_id === 'string' ? body.client_id : undefined;
  const postSecret = typeof body.client_secret === 'string' ? body.client_secret : undefined;
  if (header) {
    const match = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(header);
    if (!match?.[1]) throw new OAuthError('invalid_client', 'unsupported client authentication');
    if (postSecret !== undefined) {
      throw new OAuthError('invalid_request', 'use one client authentication method, not two');
    }
    const decoded = Buffer.from(match[1], 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    if (colon < 0) throw new OAuthError('invalid_client', 'malformed Basic credentials');
    try {
      const clientId = formDecode(decoded.slice(0, colon));
      if (postId !== undefined && postId !== clientId) {
        throw new OAuthError('invalid_request', 'client_id differs from the authenticated client');
      }
      return { clientId, clientSecret: formDecode(decoded.slice(colon + 1)) };
    } catch (error) {
      if (error instanceof OAuthError) throw error;
      throw new OAuthError('invalid_client', 'malformed Basic credentials');
    }
  }
  if (postId === undefined || postSecret === undefined) {
    throw new OAuthError('invalid_client', 'client authentication required');
  }
  return { clientId: postId, clientSecret: postSecret };
}

function tokenRequest(req: Request): TokenRequest {
  if (!req.is('application/x-www-form-urlencoded')) {
    throw new OAuthError('invalid_request', 'body must be application/x-www-form-urlencoded');
  }
  const body = (req.body ?? {}) as Record<string, unknown>;
  for (const single of ['grant_type', 'scope', 'client_id', 'client_secret']) {
    if (Array.isArray(body[single]))
      throw new OAuthError('invalid_request', `${single} given more than once`);
  }
  const grantType = typeof body.grant_type === 'string' ? body.grant_type : undefined;
  if (!grantType) throw new OAuthError('invalid_request', 'grant_type is required');
  const resource = body.resource;
  const resources = Array.isArray(resource)
    ? resource.map(String)
    : typeof resource === 'string'
      ? [resource]
      : [];
  const scope = typeof body.scope === 'string' ? body.scope : undefined;
  return { grantType, scope, resources, ...clientCredentials(req) };
}

function writeOAuthError(res: Response, error: OAuthError): void {
  if (error.error === 'invalid_client') res.setHeader('WWW-Authenticate', 'Basic realm="pkgreg"');
  res.status(error.status).json({ error: error.error, error_description: error.message });
}

export function oauthRoutes(deps: {
  db: Db;
  keyStore: KeyStore;
  urls: OAuthUrls;
  tokenTtlSeconds: number;
  limiter: Limiter;
  resolver: BackendResolver;
  access: Access;
  /** Every other grant (authorization_code, refresh_token): the authorization server (issue 29). */
  providerToken: (req: Request, res: Response) => Promise<void>;
}): Pick<
  EdgeHandlers,
  | 'authorization-server-metadata'
  | 'authorization-server-metadata-root'
  | 'protected-resource-metadata'
  | 'protected-resource-metadata-root'
  | 'jwks'
  | 'token'
> {
  const { urls } = deps;
  const ctx: IssuerContext = {
    issuer: urls.issuer,
    resource: urls.resource,
    ttlSeconds: deps.tokenTtlSeconds,
    resolver: deps.resolver,
    access: deps.access,
  };

  // RFC 8414, written here rather than taken from oidc-provider (whose discovery is OpenID's, lists
  // `openid` and is served under the issuer's path); a test holds it equal to the provider's values.
  const asMetadata = {
    issuer: urls.issuer,
    authorization_endpoint: urls.authorizationEndpoint,
    token_endpoint: urls.tokenEndpoint,
    registration_endpoint: urls.registrationEndpoint,
    revocation_endpoint: urls.revocationEndpoint,
    jwks_uri: urls.jwksUri,
    scopes_supported: ALL_SCOPES,
    response_types_supported: ['code'],
    response_modes_supported: ['form_post', 'fragment', 'query'],
    grant_types_supported: ['authorization_code', 'refresh_token', 'client_credentials'],
    code_challenge_methods_supported: ['S256'],
    token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
    client_id_metadata_document_supported: true,
    authorization_response_iss_parameter_supported: true,
  };
  // RFC 9728.
  const resourceMetadata = {
    resource: urls.resource,
    authorization_servers: [urls.issuer],
    scopes_supported: ALL_SCOPES,
    bearer_methods_supported: ['header'],
    resource_name: 'pkgreg MCP edge',
  };
  const publicJson =
    (body: unknown, cacheControl = EDGE_CACHE_CONTROL.metadata as string) =>
    (_req: Request, res: Response) => {
      res.setHeader('Access-Control-Allow-Origin', '*');
      res.setHeader('Cache-Control', cacheControl);
      res.json(body);
    };
  // The path-aware documents plus the root variants clients probe when the path-aware one is missing.
  return {
    'authorization-server-metadata': publicJson(asMetadata),
    'authorization-server-metadata-root': publicJson(asMetadata),
    'protected-resource-metadata': publicJson(resourceMetadata),
    'protected-resource-metadata-root': publicJson(resourceMetadata),

    jwks: async (_req, res, next) => {
      try {
        res.setHeader('Access-Control-Allow-Origin', '*');
        res.setHeader('Cache-Control', EDGE_CACHE_CONTROL.keys as string);
        res.json(await deps.keyStore.jwks());
      } catch (error) {
        next(error);
      }
    },

    token: [
      express.urlencoded({ extended: false, limit: '8kb' }),
      async (req, res, next) => {
        res.setHeader('Cache-Control', EDGE_CACHE_CONTROL['no-store'] as string);
        res.setHeader('Pragma', 'no-cache');
        try {
          // Every attempt counts against the caller's address, so client secrets cannot be guessed at speed.
          await deps.limiter.check({ namespace: `ip:${req.ip ?? 'unknown'}`, tool: 'oauth.token' });
          const grantType = (req.body as Record<string, unknown> | undefined)?.grant_type;
          if (grantType === 'authorization_code' || grantType === 'refresh_token') {
            await deps.providerToken(req, res);
            return;
          }
          res.json(await issueToken(deps.db, deps.keyStore, ctx, tokenRequest(req)));
        } catch (error) {
          if (error instanceof OAuthError) writeOAuthError(res, error);
          else if (error instanceof RejectError && error.reason === 'rate_limited') {
            res.setHeader('Retry-After', String(error.details.retryAfterSeconds ?? 60));
            res.status(429).json({ error: 'invalid_request', error_description: 'too many token requests' });
          } else next(error);
        }
      },
    ],
  };
}
