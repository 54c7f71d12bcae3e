import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair } from 'jose';
import {
  type Adapter,
  type AdapterPayload,
  type Configuration,
  type InteractionResults,
  Provider,
} from 'oidc-provider';

// A real OpenID Connect identity provider for sign-in tests: panva's certified oidc-provider, configured
// as a strict provider would be (authorization code only, PKCE S256 required, confidential clients),
// on 127.0.0.1. No browser is needed: its interaction endpoint, when a user agent arrives on it, signs in
// the user the test chose (`nextLogin`, else the request's `login_hint`, else the only user) and grants
// the consent asked, through oidc-provider's interaction and Grant API, then sends the agent on.

/** A client registered with the provider (a relying party such as the registry-api). */
export interface OidcProviderClient {
  clientId: string;
  clientSecret: string;
  redirectUris: string[];
  /** Default `client_secret_basic`. */
  tokenEndpointAuthMethod?: 'client_secret_basic' | 'client_secret_post';
}

/** A person who can sign in; their claims go into ID tokens and userinfo answers by scope. */
export interface OidcProviderUser {
  sub: string;
  email: string;
  name: string;
  /** Default true. */
  emailVerified?: boolean;
  /** Default the email's local part. */
  preferredUsername?: string;
}

export interface OidcProviderOptions {
  clients: OidcProviderClient[];
  users: OidcProviderUser[];
  /** Default: a port the OS picks on 127.0.0.1. */
  port?: number;
}

/** What the interaction endpoint does for the next sign-in: a user's `sub`, or an error for the client. */
export type OidcLoginChoice = string | { error: string; description?: string };

/** A request the provider answered, with the parameters it read (authorization and token requests). */
export interface SeenOidcRequest {
  method: string;
  path: string;
  status: number;
  /** Parameters as oidc-provider parsed them (query or form), e.g. code_challenge_method, login_hint. */
  params: Record<string, unknown>;
}

export interface OidcProvider {
  /** `http://127.0.0.1:<port>`; discovery is at `${issuer}/.well-known/openid-configuration`. */
  issuer: string;
  /** Every request answered, oldest first. */
  seen: SeenOidcRequest[];
  /** Errors oidc-provider reported (e.g. `grant.error` for a wrong code_verifier), oldest first. */
  errors: Array<{ event: string; error: string; description?: string }>;
  /** Chooses what the next interaction does; used once, ahead of `login_hint`. */
  nextLogin(choice: OidcLoginChoice): void;
  close(): Promise<void>;
}

/**
 * The provider's storage, one per provider so two in a process never share codes or sessions (the
 * adapter oidc-provider ships is one module-wide store, and warns on every start).
 */
function memoryAdapter(): (model: string) => Adapter {
  const store = new Map<string, { payload: AdapterPayload; expiresAt: number }>();
  const live = (key: string): AdapterPayload | undefined => {
    const entry = store.get(key);
    if (entry && entry.expiresAt <= Date.now()) store.delete(key);
    return entry && entry.expiresAt > Date.now() ? entry.payload : undefined;
  };
  const byField = (model: string, field: 'uid' | 'userCode', value: string) =>
    [...store.keys()]
      .filter((key) => key.startsWith(`${model}:`))
      .map(live)
      .find((payload) => payload?.[field] === value);
  return (model) => ({
    upsert: async (id, payload, expiresIn) => {
      store.set(`${model}:${id}`, {
        payload,
        expiresAt: expiresIn === undefined ? Number.POSITIVE_INFINITY : Date.now() + expiresIn * 1000,
      });
    },
    find: async (id) => live(`${model}:${id}`),
    findByUid: async (uid) => byField(model, 'uid', uid),
    findByUserCode: async (userCode) => byField(model, 'userCode', userCode),
    consume: async (id) => {
      const payload = live(`${model}:${id}`);
      if (payload) payload.consumed = Math.floor(Date.now() / 1000);
    },
    destroy: async (id) => {
      store.delete(`${model}:${id}`);
    },
    revokeByGrantId: async (grantId) => {
      for (const [key, entry] of store) if (entry.payload.grantId === grantId) store.delete(key);
    },
  });
}

/** Starts the provider; resolves once it listens. */
export async function startOidcProvider(options: OidcProviderOptions): Promise<OidcProvider> {
  const users = new Map(options.users.map((user) => [user.sub, user]));
  let next: OidcLoginChoice | null = null;
  const seen: SeenOidcRequest[] = [];
  const errors: OidcProvider['errors'] = [];

  // The server listens first so the issuer (which must name the port) is known before the provider.
  let handle: (req: IncomingMessage, res: ServerResponse) => void = (_req, res) => res.writeHead(503).end();
  const server: Server = createServer((req, res) => handle(req, res));
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const signingKey = { ...(await exportJWK(privateKey)), kid: 'test-signing', alg: 'RS256', use: 'sig' };

  const configuration: Configuration = {
    clients: options.clients.map((client) => ({
      client_id: client.clientId,
      client_secret: client.clientSecret,
      redirect_uris: client.redirectUris,
      token_endpoint_auth_method: client.tokenEndpointAuthMethod ?? 'client_secret_basic',
      grant_types: ['authorization_code'],
      response_types: ['code'],
    })),
    pkce: { required: () => true },
    claims: {
      openid: ['sub'],
      email: ['email', 'email_verified'],
      profile: ['name', 'preferred_username'],
    },
    // The claims the scopes grant go into the ID token itself, which is what a sign-in reads.
    conformIdTokenClaims: false,
    features: { devInteractions: { enabled: false } },
    jwks: { keys: [signingKey] },
    adapter: memoryAdapter(),
    // Explicit lifetimes (a code lives 10 minutes, as the spec suggests); the defaults print a notice.
    ttl: {
      AuthorizationCode: 600,
      AccessToken: 3600,
      IdToken: 3600,
      Interaction: 3600,
      Session: 86_400,
      Grant: 86_400,
    },
    cookies: { keys: [randomBytes(32).toString('hex')] },
    findAccount: (_ctx, sub) => {
      const user = users.get(sub);
      if (!user) return undefined;
      return {
        accountId: sub,
        claims: () => ({
          sub,
          email: user.email,
          email_verified: user.emailVerified ?? true,
          name: user.name,
          preferred_username: user.preferredUsername ?? user.email.split('@')[0],
        }),
      };
    },
  };
  const provider = new Provider(issuer, configuration);
  const record =
    (event: string) =>
    (_ctx: unknown, error: Error & { error?: string; error_description?: string }): void => {
      errors.push({ event, error: error.error ?? error.message, description: error.error_description });
    };
  provider.on('grant.error', record('grant.error'));
  provider.on('authorization.error', record('authorization.error'));
  provider.on('userinfo.error', record('userinfo.error'));
  provider.on('server_error', record('server_error'));
  provider.use(async (ctx, nextMiddleware) => {
    await nextMiddleware();
    seen.push({
      method: ctx.method,
      path: ctx.path,
      status: ctx.status,
      params: { ...((ctx.oidc?.params as Record<string, unknown> | undefined) ?? {}) },
    });
  });

  const chosenSub = (params: Record<string, unknown>): OidcLoginChoice => {
    const choice = next;
    next = null;
    if (choice !== null) return choice;
    if (typeof params.login_hint === 'string') return params.login_hint;
    if (users.size === 1) return [...users.keys()][0] as string;
    return { error: 'access_denied', description: 'the test chose no user (nextLogin or login_hint)' };
  };

  const interact = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const details = await provider.interactionDetails(req, res);
    const { prompt, params } = details;
    let result: InteractionResults;
    if (prompt.name === 'login') {
      const choice = chosenSub(params);
      if (typeof choice !== 'string') {
        result = { error: choice.error, error_description: choice.description };
      } else if (!users.has(choice)) {
        result = { error: 'access_denied', error_description: `no test user ${choice}` };
      } else {
        result = { login: { accountId: choice } };
      }
      await provider.interactionFinished(req, res, result, { mergeWithLastSubmission: false });
      return;
    }
    // Consent: grant what the client asked for, on the grant the session already holds if any.
    const accountId = details.session?.accountId as string;
    const grant = details.grantId
      ? await provider.Grant.find(details.grantId)
      : new provider.Grant({ accountId, clientId: params.client_id as string });
    if (!grant) throw new Error(`grant ${details.grantId} is gone`);
    const missing = prompt.details as {
      missingOIDCScope?: string[];
      missingOIDCClaims?: string[];
      missingResourceScopes?: Record<string, string[]>;
    };
    if (missing.missingOIDCScope) grant.addOIDCScope(missing.missingOIDCScope.join(' '));
    if (missing.missingOIDCClaims) grant.addOIDCClaims(missing.missingOIDCClaims);
    for (const [indicator, scopes] of Object.entries(missing.missingResourceScopes ?? {})) {
      grant.addResourceScope(indicator, scopes.join(' '));
    }
    const grantId = await grant.save();
    result = { consent: details.grantId ? {} : { grantId } };
    await provider.interactionFinished(req, res, result, { mergeWithLastSubmission: true });
  };

  const callback = provider.callback();
  handle = (req, res) => {
    if (req.method === 'GET' && req.url?.startsWith('/interaction/')) {
      interact(req, res).catch((error: unknown) => {
        errors.push({ event: 'interaction', error: (error as Error).message });
        if (!res.headersSent) res.writeHead(400, { 'content-type': 'text/plain' });
        res.end((error as Error).message);
      });
      return;
    }
    callback(req, res);
  };

  return {
    issuer,
    seen,
    errors,
    nextLogin(choice) {
      next = choice;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
