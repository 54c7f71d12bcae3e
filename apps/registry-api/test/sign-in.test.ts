import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { MeSchema } from '@pkgreg/contracts';
import { TEST_REDIS_URL, testKeyPrefix } from '@pkgreg/db/testing';
import { useTestDatabase } from '@pkgreg/db/vitest';
import { createLogger } from '@pkgreg/server-kit';
import {
  CookieJar,
  FakeGitHub,
  followRedirects,
  type OidcProvider,
  startOidcProvider,
} from '@pkgreg/testing';
import { Redis } from 'ioredis';
import { fetch } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../src/app.js';
import { loadEnv } from '../src/env.js';

// Signing in to the web UI (docs/accounts.md): with a real OpenID Connect provider run by the test
// (oidc-provider) and with GitHub's OAuth web flow (the GitHub stand-in), both authorization code +
// PKCE through better-auth, over real HTTP: the registry listens, the browser is a cookie jar following
// redirects. An account signed in with GitHub inherits the scopes bound to its GitHub id.

const database = useTestDatabase();
const prefix = testKeyPrefix('sign-in');
let server: Server;
let base: string;
let idp: OidcProvider;
let gh: FakeGitHub;
let redis: Redis;
const logged: string[] = [];

beforeAll(async () => {
  server = createServer();
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  idp = await startOidcProvider({
    clients: [
      { clientId: 'registry', clientSecret: 'idp-secret', redirectUris: [`${base}/api/auth/callback/oidc`] },
    ],
    users: [
      { sub: 'emp-1', email: 'grace@corp.example', name: 'Grace' },
      { sub: 'emp-2', email: 'alan@corp.example', name: 'Alan' },
    ],
  });
  gh = new FakeGitHub();
  await gh.start();
  gh.addOAuthApp({
    clientId: 'gh-app',
    clientSecret: 'gh-secret',
    callbackUrl: `${base}/api/auth/callback/github`,
  });
  gh.setProfile('octo', {
    name: 'Octo Cat',
    emails: [{ email: 'octo@users.example', primary: true, verified: true }],
  });
  redis = new Redis(TEST_REDIS_URL, { lazyConnect: true, keyPrefix: `${prefix}:` });
  const env = loadEnv({
    REGISTRY_PUBLIC_URL: base,
    OIDC_SIGN_IN_DISCOVERY_URL: `${idp.issuer}/.well-known/openid-configuration`,
    OIDC_SIGN_IN_CLIENT_ID: 'registry',
    OIDC_SIGN_IN_CLIENT_SECRET: 'idp-secret',
    GITHUB_OAUTH_CLIENT_ID: 'gh-app',
    GITHUB_OAUTH_CLIENT_SECRET: 'gh-secret',
    GITHUB_WEB_URL: gh.webBase,
    GITHUB_API_URL: gh.apiUrl,
  });
  const logger = createLogger('sign-in-test', 'debug', { write: (line: string) => void logged.push(line) });
  server.on('request', createApp({ db: database.db, redis, logger, env }));
});

afterAll(async () => {
  await new Promise((done) => server?.close(done));
  await idp?.close();
  await gh?.stop();
  redis?.disconnect();
});

/** A browser starting a provider's sign-in: the registry answers the provider's authorization URL. */
async function startSignIn(providerId: string, jar: CookieJar): Promise<URL> {
  const res = await fetch(`${base}/api/auth/sign-in/social`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin: base },
    body: JSON.stringify({ provider: providerId, callbackURL: `${base}/welcome` }),
  });
  expect(res.status, await res.clone().text()).toBe(200);
  jar.store(`${base}/`, res);
  const body = (await res.json()) as { url: string };
  return new URL(body.url);
}

async function me(jar: CookieJar) {
  const cookie = jar.header(`${base}/api/me`);
  return fetch(`${base}/api/me`, { headers: cookie ? { cookie } : {} });
}

describe('OpenID Connect sign-in', () => {
  it('authorization code + PKCE (S256) to a session; /api/me names the provider account', async () => {
    const jar = new CookieJar();
    const authorize = await startSignIn('oidc', jar);
    expect(authorize.searchParams.get('code_challenge_method')).toBe('S256');
    expect(authorize.searchParams.get('code_challenge')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    idp.nextLogin('emp-1');
    const walk = await followRedirects(authorize, {
      cookieJar: jar,
      stopAt: (url) => url.startsWith(`${base}/welcome`),
    });
    expect(walk.stopped, walk.hops.join('\n')).toBe(true);
    const who = await me(jar);
    expect(who.status).toBe(200);
    expect(MeSchema.parse(await who.json()).account).toMatchObject({
      email: 'grace@corp.example',
      name: 'Grace',
    });
    const session = logged.join('\n');
    expect(session).not.toContain('idp-secret');
  });

  it('a refusal at the provider signs nobody in', async () => {
    const jar = new CookieJar();
    const authorize = await startSignIn('oidc', jar);
    idp.nextLogin({ error: 'access_denied' });
    const walk = await followRedirects(authorize, {
      cookieJar: jar,
      stopAt: (url) => url.startsWith(base) && !url.includes('/api/auth/callback/'),
    });
    expect(walk.url).toMatch(/error/);
    expect((await me(jar)).status).toBe(401);
  });

  it('a callback with a code but without the state cookie of the browser that started it is refused', async () => {
    const victim = new CookieJar();
    const authorize = await startSignIn('oidc', victim);
    idp.nextLogin('emp-2');
    const walk = await followRedirects(authorize, {
      cookieJar: victim,
      stopAt: (url) => url.includes('/api/auth/callback/'),
    });
    // Another browser (no state cookie) replays the callback URL.
    const attacker = new CookieJar();
    const replay = await followRedirects(walk.url, {
      cookieJar: attacker,
      stopAt: (url) => url.startsWith(base) && !url.includes('/api/auth/callback/'),
    });
    expect(replay.url).toMatch(/error/);
    expect((await me(attacker)).status).toBe(401);
  });
});

describe('GitHub sign-in', () => {
  it('the web flow with PKCE; the account holding a GitHub id owns the scopes bound to that id', async () => {
    await database.db
      .insertInto('scope_owners')
      .values({ scope: 'octo', owner_id: gh.accountId('octo'), owner_login: 'octo', bound_by: 'publish' })
      .execute();
    const jar = new CookieJar();
    const authorize = await startSignIn('github', jar);
    expect(authorize.origin).toBe(new URL(gh.webBase).origin);
    expect(authorize.searchParams.get('code_challenge_method')).toBe('S256');
    gh.nextOAuthLogin('octo');
    const walk = await followRedirects(authorize, {
      cookieJar: jar,
      stopAt: (url) => url.startsWith(`${base}/welcome`),
    });
    expect(walk.stopped, walk.hops.join('\n')).toBe(true);
    const who = MeSchema.parse(await (await me(jar)).json());
    expect(who.account).toMatchObject({ email: 'octo@users.example', name: 'Octo Cat' });
    expect(who.scopes).toEqual([{ scope: 'octo', role: 'owner' }]);
    const linked = await database.db
      .selectFrom('auth_account')
      .select(['providerId', 'accountId'])
      .where('providerId', '=', 'github')
      .executeTakeFirstOrThrow();
    expect(linked.accountId).toBe(String(gh.accountId('octo')));
  });
});

describe('linking a GitHub organisation', () => {
  it('an admin of it, signed in with GitHub, links it: the scopes bound to it move in; others are refused', async () => {
    gh.addOrgMember('octo-org', 'octo', 'admin');
    gh.addOrgMember('octo-org', 'hubot', 'member');
    await database.db
      .insertInto('scope_owners')
      .values({
        scope: 'octo-org',
        owner_id: gh.accountId('octo-org'),
        owner_login: 'octo-org',
        bound_by: 'publish',
      })
      .execute();
    const signInWithGitHub = async (login: string) => {
      const jar = new CookieJar();
      const authorize = await startSignIn('github', jar);
      gh.nextOAuthLogin(login);
      await followRedirects(authorize, {
        cookieJar: jar,
        stopAt: (url) => url.startsWith(`${base}/welcome`),
      });
      return jar;
    };
    const post = (jar: CookieJar, path: string, body: unknown) =>
      fetch(`${base}${path}`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          origin: base,
          cookie: jar.header(`${base}${path}`) ?? '',
        },
        body: JSON.stringify(body),
      });
    const octo = await signInWithGitHub('octo');
    const created = await post(octo, '/api/auth/organization/create', { name: 'Octo', slug: 'octo-team' });
    expect(created.status).toBe(200);

    const wrongOrg = await post(octo, '/api/orgs/octo-team/github', { login: 'other-org' });
    expect(wrongOrg.status).toBe(403);
    const linked = await post(octo, '/api/orgs/octo-team/github', { login: 'octo-org' });
    expect(linked.status, await linked.clone().text()).toBe(200);
    expect(await linked.json()).toEqual({
      organization: 'octo-team',
      github: { login: 'octo-org', id: gh.accountId('octo-org') },
    });
    const who = MeSchema.parse(await (await me(octo)).json());
    expect(who.scopes).toContainEqual({ scope: 'octo-org', role: 'owner' });

    // A plain member of the GitHub organisation, owner of its own pkgreg organisation, cannot link it.
    gh.setProfile('hubot', {
      name: 'Hubot',
      emails: [{ email: 'hubot@users.example', primary: true, verified: true }],
    });
    const hubot = await signInWithGitHub('hubot');
    expect(
      (await post(hubot, '/api/auth/organization/create', { name: 'Hubot', slug: 'hubot-team' })).status,
    ).toBe(200);
    expect((await post(hubot, '/api/orgs/hubot-team/github', { login: 'octo-org' })).status).toBe(403);
    // Someone else's organisation: as missing.
    expect((await post(hubot, '/api/orgs/octo-team/github', { login: 'octo-org' })).status).toBe(404);
    const stored = await database.db
      .selectFrom('auth_account')
      .select('accessToken')
      .where('providerId', '=', 'github')
      .execute();
    for (const row of stored) expect(row.accessToken).not.toMatch(/^gh[opu]_/);
  });
});
