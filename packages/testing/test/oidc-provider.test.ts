import * as oidc from 'openid-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CookieJar, followRedirects, type OidcProvider, startOidcProvider } from '../src/index.js';

// A relying party built on openid-client runs the authorization-code flow with PKCE against the
// provider end to end, over plain HTTP: discovery, the authorization request, the provider's automatic
// sign-in and consent, the callback, the code exchange and the ID token's claims.

const CALLBACK = 'http://127.0.0.1:9/auth/callback';
const POST_CALLBACK = 'http://127.0.0.1:9/auth/post-callback';
const isCallback = (url: string) => url.startsWith(CALLBACK) || url.startsWith(POST_CALLBACK);

let provider: OidcProvider;

beforeAll(async () => {
  provider = await startOidcProvider({
    clients: [
      { clientId: 'registry', clientSecret: 'registry-secret', redirectUris: [CALLBACK] },
      {
        clientId: 'posting',
        clientSecret: 'posting-secret',
        redirectUris: [POST_CALLBACK],
        tokenEndpointAuthMethod: 'client_secret_post',
      },
    ],
    users: [
      { sub: 'u-ada', email: 'ada@example.test', name: 'Ada Lovelace' },
      {
        sub: 'u-bob',
        email: 'bob@example.test',
        name: 'Bob',
        emailVerified: false,
        preferredUsername: 'bobby',
      },
    ],
  });
});
afterAll(async () => {
  await provider?.close();
});

async function relyingParty(
  clientId = 'registry',
  secret = 'registry-secret',
  auth: oidc.ClientAuth = oidc.ClientSecretBasic(secret),
): Promise<oidc.Configuration> {
  return oidc.discovery(new URL(provider.issuer), clientId, secret, auth, {
    execute: [oidc.allowInsecureRequests],
  });
}

/** Starts an authorization request and walks it to the callback; returns what the callback received. */
async function authorize(
  config: oidc.Configuration,
  extra: Record<string, string> = {},
  redirectUri = CALLBACK,
  cookieJar?: CookieJar,
) {
  const verifier = oidc.randomPKCECodeVerifier();
  const state = oidc.randomState();
  const url = oidc.buildAuthorizationUrl(config, {
    redirect_uri: redirectUri,
    scope: 'openid email profile',
    code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state,
    ...extra,
  });
  const walked = await followRedirects(url, { stopAt: isCallback, cookieJar });
  expect(walked.stopped).toBe(true);
  return { callback: new URL(walked.url), verifier, state, walked };
}

describe('OIDC provider: authorization code with PKCE', () => {
  it('signs in the login_hint user and issues an ID token with their claims', async () => {
    const config = await relyingParty();
    expect(config.serverMetadata()).toMatchObject({
      issuer: provider.issuer,
      code_challenge_methods_supported: ['S256'],
    });
    const { callback, verifier, state } = await authorize(config, { login_hint: 'u-bob' });
    const tokens = await oidc.authorizationCodeGrant(config, callback, {
      pkceCodeVerifier: verifier,
      expectedState: state,
    });
    expect(tokens.claims()).toMatchObject({
      iss: provider.issuer,
      aud: 'registry',
      sub: 'u-bob',
      email: 'bob@example.test',
      email_verified: false,
      name: 'Bob',
      preferred_username: 'bobby',
    });
    const info = await oidc.fetchUserInfo(config, tokens.access_token, 'u-bob');
    expect(info.email).toBe('bob@example.test');
    const authorization = provider.seen.find((r) => r.path === '/auth' && r.params.login_hint === 'u-bob');
    expect(authorization?.params).toMatchObject({ code_challenge_method: 'S256', client_id: 'registry' });
  });

  it('nextLogin wins over login_hint once; client_secret_post clients exchange with a form secret', async () => {
    const config = await relyingParty('posting', 'posting-secret', oidc.ClientSecretPost('posting-secret'));
    provider.nextLogin('u-ada');
    const first = await authorize(config, { login_hint: 'u-bob' }, POST_CALLBACK);
    const tokens = await oidc.authorizationCodeGrant(config, first.callback, {
      pkceCodeVerifier: first.verifier,
      expectedState: first.state,
    });
    expect(tokens.claims()).toMatchObject({
      sub: 'u-ada',
      email: 'ada@example.test',
      email_verified: true,
      preferred_username: 'ada',
    });
    const exchange = provider.seen.findLast((r) => r.path === '/token');
    expect(exchange?.params).toMatchObject({ client_secret: 'posting-secret' });

    const second = await authorize(config, { login_hint: 'u-bob' }, POST_CALLBACK);
    const again = await oidc.authorizationCodeGrant(config, second.callback, {
      pkceCodeVerifier: second.verifier,
      expectedState: second.state,
    });
    expect(again.claims()?.sub).toBe('u-bob');
  });

  it('a second authorization with the same cookies reuses the session: no new sign-in', async () => {
    const config = await relyingParty();
    const cookieJar = new CookieJar();
    await authorize(config, { login_hint: 'u-ada' }, CALLBACK, cookieJar);
    const again = await authorize(config, { login_hint: 'u-bob' }, CALLBACK, cookieJar);
    expect(again.walked.hops.some((hop) => hop.includes('/interaction/'))).toBe(false);
    const tokens = await oidc.authorizationCodeGrant(config, again.callback, {
      pkceCodeVerifier: again.verifier,
      expectedState: again.state,
    });
    expect(tokens.claims()?.sub).toBe('u-ada');
  });
});

describe('OIDC provider: failures', () => {
  it('refuses an authorization request without PKCE', async () => {
    const config = await relyingParty();
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: CALLBACK,
      scope: 'openid',
      state: 's1',
      login_hint: 'u-ada',
    });
    const walked = await followRedirects(url, { stopAt: isCallback });
    const callback = new URL(walked.url);
    expect(callback.searchParams.get('error')).toBe('invalid_request');
    expect(callback.searchParams.get('error_description')).toMatch(/PKCE/);
  });

  it('refuses a wrong code_verifier (invalid_grant)', async () => {
    const config = await relyingParty();
    const { callback, state } = await authorize(config, { login_hint: 'u-ada' });
    await expect(
      oidc.authorizationCodeGrant(config, callback, {
        pkceCodeVerifier: oidc.randomPKCECodeVerifier(),
        expectedState: state,
      }),
    ).rejects.toMatchObject({ error: 'invalid_grant' });
    expect(provider.errors.at(-1)).toMatchObject({ event: 'grant.error', error: 'invalid_grant' });
  });

  it('refuses a code used twice (invalid_grant)', async () => {
    const config = await relyingParty();
    const { callback, verifier, state } = await authorize(config, { login_hint: 'u-ada' });
    await oidc.authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier, expectedState: state });
    await expect(
      oidc.authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier, expectedState: state }),
    ).rejects.toMatchObject({ error: 'invalid_grant' });
  });

  it('refuses a wrong client secret (invalid_client)', async () => {
    const config = await relyingParty();
    const { callback, verifier, state } = await authorize(config, { login_hint: 'u-ada' });
    const wrong = await relyingParty('registry', 'not-the-secret');
    await expect(
      oidc.authorizationCodeGrant(wrong, callback, { pkceCodeVerifier: verifier, expectedState: state }),
    ).rejects.toMatchObject({
      status: 401,
      cause: [{ scheme: 'basic', parameters: { error: 'invalid_client' } }],
    });
  });

  it('answers access_denied at the callback when the test denies the sign-in', async () => {
    const config = await relyingParty();
    provider.nextLogin({ error: 'access_denied', description: 'the user said no' });
    const { callback, verifier, state } = await authorize(config, { login_hint: 'u-ada' });
    expect(callback.searchParams.get('error')).toBe('access_denied');
    await expect(
      oidc.authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier, expectedState: state }),
    ).rejects.toMatchObject({ error: 'access_denied', error_description: 'the user said no' });
  });

  it('denies a login_hint naming no test user', async () => {
    const config = await relyingParty();
    const { callback } = await authorize(config, { login_hint: 'u-nobody' });
    expect(callback.searchParams.get('error')).toBe('access_denied');
  });
});
