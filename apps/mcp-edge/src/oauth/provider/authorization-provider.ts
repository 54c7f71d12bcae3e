import { randomBytes } from 'node:crypto';
import { isIP } from 'node:net';
import { ALL_SCOPES } from '@pkgreg/contracts';
import type { Db } from '@pkgreg/db';
import type { JWK } from 'jose';
import Provider, { type ClientMetadata, type Configuration, errors } from 'oidc-provider';
import { verifySecret } from '../clients.service.js';
import { ALLOWED_SCOPES, createArtifactAdapter, DYNAMIC_CLIENT_PREFIX } from './artifact-adapter.js';

// The edge's authorization code flow (issue 29; docs/decisions.md, "MCP edge: people sign in by URL"):
// oidc-provider configured as an OAuth 2.1 server for one protected resource. Everything it would do by
// default that the edge does not want is switched off here, each with its reason; what a person sees
// (sign-in and consent) is the caller's `interactionPath`, finished with `provider.interactionFinished`.

export interface AuthorizationProviderOptions {
  /** `{base}/mcp`; the provider answers under its path (mount it there). */
  issuer: string;
  /** The MCP resource of the public base: a token's `aud` when its request names none. */
  resource: string;
  /**
   * Whether a token may be asked for `indicator` too (a hosted tenant's or tunnel session's resource;
   * admission decides who may use it). The base's resource only, when not given.
   */
  servesResource?: (indicator: string) => boolean;
  db: Db;
  /** Private signing keys (ES256, each with its `kid`), the first signs. */
  signingKeys: JWK[];
  accessTokenTtlSeconds: number;
  refreshTokenTtlSeconds: number;
  /** Keys signing the provider's cookies, newest first. */
  cookieKeys: string[];
  /** Where a person signs in and consents for interaction `uid` (a path on the issuer's host). */
  interactionPath: (uid: string) => string;
  /** Whether an account may still be issued tokens (it exists and is not suspended). */
  accountActive: (accountId: string) => Promise<boolean>;
  /** A client registered dynamically and unused this long is forgotten. */
  dynamicClientUnusedDays: number;
  /** Clients known in advance (tests; dynamic and metadata-document clients come through the adapter). */
  clients?: ClientMetadata[];
  /**
   * How metadata documents are fetched; the provider's own fetch by default, which refuses special-use
   * addresses at connect time. Tests pass one that trusts their certificate authority.
   */
  fetch?: Configuration['fetch'];
}

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/** The part of oidc-provider's client metadata schema (helpers/client_schema.js) replaced below. */
interface ClientSchema {
  scope?: string;
  scopes(): void;
  invalidate(message: string): never;
}

/** An `http:` loopback URI without its port, when `uri` is one in normal form; undefined otherwise. */
function withoutLoopbackPort(uri: string): string | undefined {
  const url = URL.parse(uri);
  if (url?.protocol !== 'http:' || !LOOPBACK_HOSTS.has(url.hostname) || url.href !== uri) return undefined;
  url.port = '';
  return url.href;
}

/**
 * Whether a client's metadata document may be fetched: a name a public DNS could answer for (no IP
 * literal, no `localhost`, no single label), at most 2 KiB. The provider's fetch then refuses a name
 * that resolves to a special-use address.
 */
function metadataDocumentFetchable(id: string): boolean {
  const url = URL.parse(id);
  if (!url || id.length > 2048) return false;
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (isIP(host) !== 0 || !host.includes('.') || host === 'localhost' || host.endsWith('.localhost'))
    return false;
  return true;
}

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

function errorPage(error: string, description: string | undefined): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Sign-in refused · pkgreg</title></head>
<body><main><h1>Sign-in refused</h1><p>${escapeHtml(description ?? error)}</p>
<p><code>${escapeHtml(error)}</code></p></main></body></html>
`;
}

/** The scopes a client may be given: an operator's client its allowed ones, any other every scope. */
export function allowedScopes(client: { metadata(): Record<string, unknown> }): string[] {
  const allowed = client.metadata()[ALLOWED_SCOPES];
  return Array.isArray(allowed) ? allowed.filter((s): s is string => typeof s === 'string') : [...ALL_SCOPES];
}

export function createAuthorizationProvider(options: AuthorizationProviderOptions): Provider {
  const { resource } = options;
  const configuration: Configuration = {
    adapter: createArtifactAdapter(options.db, { dynamicClientUnusedDays: options.dynamicClientUnusedDays }),
    clients: options.clients ?? [],
    jwks: { keys: options.signingKeys } as Configuration['jwks'],
    cookies: { keys: options.cookieKeys },
    // No ID tokens or userinfo: this is an OAuth server for one resource, not an OpenID provider.
    scopes: [],
    claims: {},
    responseTypes: ['code'],
    // Set only on operators' clients by the adapter: a registration or metadata document naming it is
    // refused, so no client widens or narrows itself through it.
    extraClientMetadata: {
      properties: [ALLOWED_SCOPES],
      validator: (ctx, key, value) => {
        if (key === ALLOWED_SCOPES && value !== undefined && ctx !== undefined)
          throw new errors.InvalidClientMetadata(`${ALLOWED_SCOPES} is not a registrable member`);
      },
    },
    routes: {
      authorization: '/authorize',
      token: '/token',
      revocation: '/revoke',
      registration: '/register',
      jwks: '/jwks.json',
    },
    clientAuthMethods: ['none', 'client_secret_basic', 'client_secret_post'],
    clientDefaults: {
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      id_token_signed_response_alg: 'ES256',
    },
    enabledJWA: { idTokenSigningAlgValues: ['ES256'] },
    // S256 is the only method the provider knows; every client must use it, public or not.
    pkce: { required: () => true },
    features: {
      // On by default: a built-in login page for development, and DPoP, whose bound tokens the edge's
      // verifier would accept as plain bearer tokens.
      devInteractions: { enabled: false },
      dPoP: { enabled: false },
      rpInitiatedLogout: { enabled: false },
      userinfo: { enabled: false },
      introspection: { enabled: false },
      revocation: { enabled: true },
      // Client ID Metadata Documents: a client_id that is an https URL names its own metadata. Only for
      // public clients of the code flow (the provider already refuses shared secrets in them).
      clientIdMetadataDocument: {
        enabled: true,
        ack: 'draft-02',
        allowFetch: async (_ctx, id) => metadataDocumentFetchable(id),
        allowClient: async (_ctx, client) => {
          const metadata = client.metadata();
          const grants = (metadata.grant_types as string[] | undefined) ?? [];
          return grants.every((grant) => grant === 'authorization_code' || grant === 'refresh_token');
        },
        cacheDuration: { min: 30, max: 86_400 },
      },
      // RFC 7591, open: clients without a metadata document register here. No registration access
      // tokens (RFC 7592 management): a client registers again instead.
      registration: {
        enabled: true,
        initialAccessToken: false,
        issueRegistrationAccessToken: false,
        idFactory: () => `${DYNAMIC_CLIENT_PREFIX}${randomBytes(16).toString('hex')}`,
        secretFactory: () => `pks_${randomBytes(32).toString('base64url')}`,
      },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => resource,
        useGrantedResource: () => true,
        getResourceServerInfo: (ctx, indicator, client) => {
          if (indicator !== resource && options.servesResource?.(indicator) !== true)
            throw new errors.InvalidTarget();
          const requested = String(ctx.oidc.params?.scope ?? '')
            .split(' ')
            .filter(Boolean);
          const unknown = requested.filter((scope) => !(ALL_SCOPES as string[]).includes(scope));
          if (unknown.length > 0) throw new errors.InvalidScope('unknown scope', unknown.join(' '));
          // The provider gives what was asked within these: an operator's client is narrowed to its
          // allowed scopes, as its client_credentials tokens are.
          return {
            scope: allowedScopes(client).join(' '),
            audience: indicator,
            accessTokenTTL: options.accessTokenTtlSeconds,
            accessTokenFormat: 'jwt',
            jwt: { sign: { alg: 'ES256' } },
          };
        },
      },
    },
    // Refresh tokens for every client allowed the grant (the default asks for `offline_access`), rotated
    // on every use, living on their own rather than with the provider's short browser session.
    issueRefreshToken: async (_ctx, client) => client.grantTypeAllowed('refresh_token'),
    rotateRefreshToken: true,
    expiresWithSession: async () => false,
    ttl: {
      AccessToken: options.accessTokenTtlSeconds,
      AuthorizationCode: 60,
      RefreshToken: options.refreshTokenTtlSeconds,
      Grant: options.refreshTokenTtlSeconds,
      Interaction: 600,
      Session: 600,
    },
    interactions: { url: (_ctx, interaction) => options.interactionPath(interaction.uid) },
    ...(options.fetch ? { fetch: options.fetch } : {}),
    findAccount: async (_ctx, sub) =>
      (await options.accountActive(sub)) ? { accountId: sub, claims: () => ({ sub }) } : undefined,
    // An error that cannot go back to the app (no valid client or redirect_uri): the default page loads
    // web fonts and has no CSP. Here a plain page for browsers, RFC 6749's JSON for everyone else.
    renderError: async (ctx, out) => {
      ctx.set('Cache-Control', 'no-store');
      ctx.set('Content-Security-Policy', "default-src 'none'; frame-ancestors 'none'");
      if (ctx.accepts('json', 'html') === 'html') {
        ctx.type = 'html';
        ctx.body = errorPage(out.error, out.error_description);
      } else {
        ctx.type = 'json';
        ctx.body = { error: out.error, error_description: out.error_description };
      }
    },
  };
  const provider = new Provider(options.issuer, configuration);
  // RFC 8252 §7.3: a loopback redirect URI may come with any port (a native app listens on whatever port
  // it gets; Claude's metadata document lists a port-less one). The provider allows that only to clients
  // declaring `application_type: native`, which metadata documents rarely do.
  const redirectAllowed = provider.Client.prototype.redirectUriAllowed;
  provider.Client.prototype.redirectUriAllowed = function (this: { redirectUris?: string[] }, value: string) {
    if (redirectAllowed.call(this, value)) return true;
    const bare = withoutLoopbackPort(value);
    return bare !== undefined && (this.redirectUris ?? []).some((uri) => withoutLoopbackPort(uri) === bare);
  };
  // A client's `scope` (RFC 7591; the MCP SDK registers with the resource's scopes_supported, and a
  // metadata document may name them) is checked against the provider's own OpenID scopes, of which
  // there are none here: against the resource's scopes instead. The provider only uses it to limit
  // OpenID scopes, so it limits nothing else.
  const schema = (provider.Client as unknown as { Schema: { prototype: ClientSchema } }).Schema.prototype;
  schema.scopes = function (this: ClientSchema) {
    if (!this.scope) return;
    const named = new Set(this.scope.split(' ').filter(Boolean));
    for (const scope of named) {
      if (!(ALL_SCOPES as readonly string[]).includes(scope))
        this.invalidate('scope must only contain scopes this server supports');
    }
    this.scope = [...named].join(' ');
  };
  // A registered client's secret is stored as a scrypt hash (artifact-adapter.ts): compare through it.
  const compare = provider.Client.prototype.compareClientSecret;
  provider.Client.prototype.compareClientSecret = async function (
    this: { clientSecret?: string },
    actual: string,
  ) {
    if (this.clientSecret?.startsWith('scrypt$')) return verifySecret(actual, this.clientSecret);
    return compare.call(this, actual);
  };
  return provider;
}
