import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ALL_SCOPES, RejectError } from '@pkgreg/contracts';
import type { Db } from '@pkgreg/db';
import { type Logger, OUTAGE_RETRY_AFTER_SECONDS, outageMonitorOf, startPeriodic } from '@pkgreg/server-kit';
import express, { type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import { sql } from 'kysely';
import type Provider from 'oidc-provider';
import type { Configuration } from 'oidc-provider';
import type { BackendResolver } from '../../admission/backends.js';
import type { Limiter } from '../../admission/limits.js';
import type { EdgeHandlers } from '../../routes/route-table.js';
import type { OAuthUrls } from '../oauth.routes.js';
import type { KeyStore } from '../signing-keys.service.js';
import { DYNAMIC_CLIENT_PREFIX, idHash } from './artifact-adapter.js';
import { allowedScopes, createAuthorizationProvider } from './authorization-provider.js';
import { sendSignInFailure } from './sign-in-failure.js';

// The authorization code flow mounted in the edge (issue 29; docs/mcp-oauth.md). oidc-provider answers
// /mcp/authorize, /mcp/register, /mcp/revoke and the token endpoint's grants other than
// client_credentials (oauth.routes.ts keeps that one). Sign-in and consent happen on the registry,
// which knows who is signed in: the edge hands an interaction over through edge_consent_requests and
// takes the decision back at /mcp/interaction/:uid/return, bound to this browser by a cookie.

export interface EdgeAuthorizationDeps {
  db: Db;
  keyStore: KeyStore;
  logger: Logger;
  limiter: Limiter;
  urls: OAuthUrls;
  /** Which hosts the edge serves: a token may name a hosted tenant's or tunnel session's resource. */
  resolver: BackendResolver;
  /** The exact hosts the tenant and session settings name (a token may name their resources). */
  servedHosts: ReadonlySet<string>;
  /** PKGREG_PUBLIC_BASE_URL: the provider answers as this host whatever Host a request came with. */
  base: string;
  /** Where the registry's consent page is (`/api/mcp/consent/<id>` under it). */
  registryPublicUrl: string;
  accessTokenTtlSeconds: number;
  refreshTokenTtlSeconds: number;
  cookieKeys: string[];
  dynamicClientUnusedDays: number;
  /** Metadata documents' fetch (tests trust their own certificate authority); the provider's by default. */
  fetch?: Configuration['fetch'];
}

export type AuthorizationHandlers = Pick<
  EdgeHandlers,
  'authorize' | 'authorize-resume' | 'register' | 'revoke' | 'interaction' | 'interaction-return'
>;

export interface EdgeAuthorization {
  handlers: AuthorizationHandlers;
  /** The token endpoint for every grant but client_credentials (its form already parsed). */
  token(req: Request, res: Response): Promise<void>;
  /** The provider signing with the current key (rebuilt when the active signing key changes). */
  provider(): Promise<Provider>;
  /** Stops the sweep of expired sign-in rows. */
  close(): Promise<void>;
}

/** How often expired sign-in rows (interactions, codes, hand-offs, unused registrations) are deleted. */
const SWEEP_EVERY_MS = 5 * 60_000;

/**
 * Deletes what has expired: the provider's artifacts, hand-offs past their lifetime, registrations
 * unused too long. Each is one indexed delete; every edge may run it, the result is the same.
 */
export async function sweepExpiredSignIns(db: Db): Promise<void> {
  const now = new Date();
  await db.deleteFrom('edge_oauth_artifacts').where('expires_at', '<', now).execute();
  await db.deleteFrom('edge_consent_requests').where('expires_at', '<', now).execute();
  await db.deleteFrom('edge_dynamic_clients').where('expires_at', '<', now).execute();
}

const CONSENT_COOKIE = 'pkgreg_consent';
/** Sign-ins a client may start are bounded by the provider's interaction lifetime (10 minutes). */
const INTERACTION_SECONDS = 600;
const MAX_REDIRECT_URIS = 10;

/** Whether an account may be issued tokens: it exists and no suspension is in force. */
export async function accountActive(db: Db, accountId: string): Promise<boolean> {
  const row = await db
    .selectFrom('auth_user')
    .select('id')
    .where('id', '=', accountId)
    .where((eb) =>
      eb.or([
        eb('banned', 'is not', true),
        eb.and([eb('banExpires', 'is not', null), eb('banExpires', '<', new Date())]),
      ]),
    )
    .executeTakeFirst();
  return row !== undefined;
}

/**
 * Where the app sends the person back, as the consent page shows it: the host of a web address, or
 * `scheme://host` of an app's own scheme (so the page can tell an app on this computer).
 */
function redirectHostOf(redirectUri: string): string {
  const url = new URL(redirectUri);
  return url.protocol === 'http:' || url.protocol === 'https:' ? url.host : `${url.protocol}//${url.host}`;
}

function cookieValue(req: Request, name: string): string | undefined {
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const at = part.indexOf('=');
    if (at > 0 && part.slice(0, at).trim() === name) return part.slice(at + 1).trim();
  }
  return undefined;
}

export function createEdgeAuthorization(deps: EdgeAuthorizationDeps): EdgeAuthorization {
  const { db, logger, urls } = deps;
  const base = new URL(deps.base);
  const secureCookies = base.protocol === 'https:';
  let built: { kid: string; provider: Provider; handle: ReturnType<Provider['callback']> } | undefined;

  function build(signingKey: Awaited<ReturnType<KeyStore['signingJwk']>>): Provider {
    const provider = createAuthorizationProvider({
      issuer: urls.issuer,
      resource: urls.resource,
      servesResource: (indicator) => {
        const url = URL.parse(indicator);
        if (!url || deps.resolver.resolve(url.host)?.resource !== indicator) return false;
        // A handle matches a Host under any domain (admission's rule), but a token is only ever issued
        // for this deployment's own hosts: a setting's exact host, or a name under the base host.
        // Otherwise an attacker's `acme.attacker.example/mcp` would get a token its server could replay.
        return deps.servedHosts.has(url.hostname) || url.hostname.endsWith(`.${base.hostname}`);
      },
      db,
      signingKeys: [signingKey],
      accessTokenTtlSeconds: deps.accessTokenTtlSeconds,
      refreshTokenTtlSeconds: deps.refreshTokenTtlSeconds,
      cookieKeys: deps.cookieKeys,
      interactionPath: (uid) => `/mcp/interaction/${uid}`,
      accountActive: (id) => accountActive(db, id),
      dynamicClientUnusedDays: deps.dynamicClientUnusedDays,
      ...(deps.fetch ? { fetch: deps.fetch } : {}),
    });
    // The host and scheme come from PKGREG_PUBLIC_BASE_URL (the headers are set below), never from the
    // request: resume URLs and cookies must not follow a Host an attacker chose.
    provider.proxy = true;
    provider.on('server_error', (ctx, error) => {
      if (outageMonitorOf(logger).failed(error)) ctx.state.outage = true;
      else logger.error({ err: error }, 'authorization server error');
    });
    provider.use(async (ctx, next) => {
      await next();
      if (ctx.state.outage) {
        ctx.status = 503;
        ctx.set('Retry-After', String(OUTAGE_RETRY_AFTER_SECONDS));
        ctx.body = { error: 'temporarily_unavailable' };
      } else if (ctx.status === 401 && !ctx.response.get('WWW-Authenticate')) {
        // The provider challenges only requests that sent an Authorization header (RFC 6749 §5.2 asks
        // for it whenever the client authenticated; every 401 here names the scheme).
        ctx.set('WWW-Authenticate', 'Basic realm="pkgreg"');
      }
    });
    return provider;
  }

  async function current(): Promise<NonNullable<typeof built>> {
    const key = await deps.keyStore.signingJwk();
    if (built?.kid !== key.kid) {
      const provider = build(key);
      built = { kid: key.kid, provider, handle: provider.callback() };
    }
    return built;
  }

  /** Hands a request to the provider at its path below the issuer (`/mcp/token` → `/token`). */
  async function toProvider(req: Request, res: Response): Promise<void> {
    const { handle } = await current();
    req.headers['x-forwarded-host'] = base.host;
    req.headers['x-forwarded-proto'] = base.protocol.slice(0, -1);
    req.url = req.originalUrl.slice('/mcp'.length);
    await handle(req as IncomingMessage, res as ServerResponse);
  }

  const pass = (...before: RequestHandler[]): RequestHandler[] => [
    ...before,
    (req, res, next) => {
      toProvider(req, res).catch(next);
    },
  ];

  const limited =
    (tool: string): RequestHandler =>
    (req, res, next) => {
      deps.limiter.check({ namespace: `ip:${req.ip ?? 'unknown'}`, tool }).then(
        () => next(),
        (error: unknown) => {
          if (!(error instanceof RejectError && error.reason === 'rate_limited')) return next(error);
          res.setHeader('Retry-After', String(error.details.retryAfterSeconds ?? 60));
          res.status(429).json({ error: 'invalid_request', error_description: 'too many requests' });
        },
      );
    };

  /**
   * A client that asks for no scope asks for every one, as with client_credentials: the person sees
   * them all on the consent page and the token carries what they allowed.
   */
  const defaultScope: RequestHandler = (req, _res, next) => {
    const query = new URLSearchParams(req.originalUrl.split('?')[1] ?? '');
    if (!query.get('scope')) {
      query.set('scope', ALL_SCOPES.join(' '));
      req.originalUrl = `${req.originalUrl.split('?')[0]}?${query}`;
    }
    next();
  };

  /** RFC 7591 requests bounded before the provider reads them (unused registrations: sweepExpiredSignIns). */
  const registration: RequestHandler = (req, res, next) => {
    const body = (req.body ?? {}) as { redirect_uris?: unknown };
    const uris = body.redirect_uris;
    if (
      Array.isArray(uris) &&
      (uris.length > MAX_REDIRECT_URIS || uris.some((u) => String(u).length > 2000))
    ) {
      res.status(400).json({
        error: 'invalid_redirect_uri',
        error_description: `at most ${MAX_REDIRECT_URIS} redirect_uris of 2000 characters each`,
      });
      return;
    }
    next();
  };

  async function interaction(req: Request, res: Response): Promise<void> {
    const { provider } = await current();
    const details = await provider.interactionDetails(req, res);
    if (details.uid !== req.params.uid) throw new SignInFailure();
    const params = details.params as {
      client_id?: string;
      redirect_uri?: string;
      scope?: string;
      resource?: string | string[];
    };
    const client = params.client_id ? await provider.Client.find(params.client_id) : undefined;
    if (!client || !params.redirect_uri) throw new SignInFailure();
    const metadata = client.metadata() as { client_name?: string; client_uri?: string; logo_uri?: string };
    const clientId = client.clientId;
    const id = randomBytes(32).toString('base64url');
    const binding = randomBytes(32).toString('base64url');
    const allowed = allowedScopes(client);
    const scopes = (params.scope ?? '').split(' ').filter((s) => allowed.includes(s));
    const row = {
      id_hash: idHash(id),
      client_id: clientId,
      client_kind: clientId.startsWith('https://')
        ? ('metadata_document' as const)
        : clientId.startsWith(DYNAMIC_CLIENT_PREFIX)
          ? ('registered' as const)
          : ('operator' as const),
      client_name: metadata.client_name ?? null,
      client_uri: metadata.client_uri ?? null,
      logo_uri: metadata.logo_uri ?? null,
      redirect_host: redirectHostOf(params.redirect_uri),
      // The provider checked it (servesResource); one resource per sign-in, the base's when none named.
      resource: typeof params.resource === 'string' ? params.resource : urls.resource,
      scopes,
      binding_hash: idHash(binding),
      account_id: null,
      decision: null,
      decision_code_hash: null,
      decided_at: null,
      consumed_at: null,
      expires_at: new Date(details.exp * 1000),
    };
    // Opening the interaction again (a reload) starts the hand-off over: the earlier id stops working.
    await db
      .insertInto('edge_consent_requests')
      .values({ ...row, interaction_uid: details.uid })
      .onConflict((oc) => oc.column('interaction_uid').doUpdateSet(row))
      .execute();
    res.cookie(CONSENT_COOKIE, binding, {
      httpOnly: true,
      secure: secureCookies,
      sameSite: 'lax',
      path: `/mcp/interaction/${details.uid}`,
      maxAge: INTERACTION_SECONDS * 1000,
    });
    res.setHeader('Cache-Control', 'no-store');
    res.redirect(303, `${deps.registryPublicUrl}/api/mcp/consent/${id}`);
  }

  /** The grant a person's allowing becomes: the remembered one of (account, client) widened, or a new one. */
  async function grantFor(
    provider: Provider,
    decided: { account_id: string; client_id: string; scopes: string[]; resource: string },
  ) {
    const { account_id: accountId, client_id: clientId } = decided;
    const delegation = await db
      .selectFrom('edge_delegations')
      .select('grant_id')
      .where('account_id', '=', accountId)
      .where('client_id', '=', clientId)
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    const known = delegation?.grant_id ? await provider.Grant.find(delegation.grant_id) : undefined;
    const grant =
      known && known.accountId === accountId && known.clientId === clientId
        ? known
        : new provider.Grant({ accountId, clientId });
    grant.addResourceScope(decided.resource, decided.scopes.join(' '));
    const grantId = await grant.save();
    await db
      .updateTable('edge_delegations')
      .set({ grant_id: grantId, last_used_at: new Date() })
      .where('account_id', '=', accountId)
      .where('client_id', '=', clientId)
      .where('revoked_at', 'is', null)
      .execute();
    return grantId;
  }

  async function interactionReturn(req: Request, res: Response): Promise<void> {
    const { provider } = await current();
    const details = await provider.interactionDetails(req, res);
    const binding = cookieValue(req, CONSENT_COOKIE);
    const code = typeof req.query.c === 'string' ? req.query.c : undefined;
    if (details.uid !== req.params.uid || !binding || !code) throw new SignInFailure();
    // One use: the decision is taken by the browser that started the sign-in, with the code the registry
    // gave that decision, once, before it expires.
    const { rows } = await sql<{
      decision: 'allow' | 'deny';
      account_id: string;
      client_id: string;
      scopes: string[];
      resource: string;
    }>`
      update edge_consent_requests set consumed_at = now()
      where interaction_uid = ${details.uid} and consumed_at is null and decision is not null
        and binding_hash = ${idHash(binding)} and decision_code_hash = ${idHash(code)} and expires_at > now()
      returning decision, account_id, client_id, scopes, resource`.execute(db);
    const decided = rows[0];
    if (!decided || decided.client_id !== (details.params as { client_id?: string }).client_id)
      throw new SignInFailure();
    res.clearCookie(CONSENT_COOKIE, { path: `/mcp/interaction/${details.uid}` });
    res.setHeader('Cache-Control', 'no-store');
    if (decided.decision === 'deny') {
      await provider.interactionFinished(
        req,
        res,
        { error: 'access_denied', error_description: 'the person did not allow the app' },
        { mergeWithLastSubmission: false },
      );
      return;
    }
    if (!(await accountActive(db, decided.account_id))) {
      await provider.interactionFinished(
        req,
        res,
        { error: 'access_denied', error_description: 'the account is suspended' },
        { mergeWithLastSubmission: false },
      );
      return;
    }
    const grantId = await grantFor(provider, decided);
    await provider.interactionFinished(
      req,
      res,
      { login: { accountId: decided.account_id, remember: false }, consent: { grantId } },
      { mergeWithLastSubmission: false },
    );
  }

  const page =
    (run: (req: Request, res: Response) => Promise<void>): RequestHandler =>
    (req, res, next: NextFunction) => {
      run(req, res).catch((error: unknown) => {
        if (error instanceof SignInFailure || (error as { name?: string })?.name === 'SessionNotFound')
          sendSignInFailure(req, res);
        else next(error);
      });
    };

  const sweep = startPeriodic(() => sweepExpiredSignIns(db), {
    intervalMs: SWEEP_EVERY_MS,
    logger,
    failureMessage: 'sweeping expired sign-ins failed',
  });

  return {
    close: () => sweep.stop(),
    handlers: {
      authorize: pass(limited('oauth.authorize'), defaultScope),
      'authorize-resume': pass(),
      register: pass(express.json({ limit: '16kb' }), limited('oauth.register'), registration),
      revoke: pass(express.urlencoded({ extended: false, limit: '8kb' }), limited('oauth.token')),
      interaction: [limited('oauth.authorize'), page(interaction)],
      'interaction-return': page(interactionReturn),
    },
    token: toProvider,
    provider: async () => (await current()).provider,
  };
}

/** The sign-in cannot go on in this browser (missing or foreign cookies, a used or unknown hand-off). */
class SignInFailure extends Error {
  constructor() {
    super('sign-in failed');
    this.name = 'SignInFailure';
  }
}
