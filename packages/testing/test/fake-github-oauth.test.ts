import { createHash, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeGitHub, followRedirects } from '../src/index.js';

// An OAuth sign-in with GitHub, as an app does it with plain HTTP: the authorize redirect (PKCE S256),
// the code exchange, then the user APIs a sign-in reads with the token it got.

const CALLBACK = 'http://127.0.0.1:9/auth/github/callback';

let gh: FakeGitHub;
let ghe: FakeGitHub;

beforeAll(async () => {
  gh = new FakeGitHub();
  ghe = new FakeGitHub('/api/v3');
  await Promise.all([gh.start(), ghe.start()]);
  for (const fake of [gh, ghe]) {
    fake.addOAuthApp({ clientId: 'Iv1.registry', clientSecret: 'shh', callbackUrl: CALLBACK });
  }
});
afterAll(async () => {
  await Promise.all([gh?.stop(), ghe?.stop()]);
});

function pkce(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

/** Walks GET /login/oauth/authorize to the app's callback; returns the callback's query. */
async function authorize(fake: FakeGitHub, params: Record<string, string>): Promise<URLSearchParams> {
  const url = new URL('/login/oauth/authorize', fake.webBase);
  for (const [key, value] of Object.entries({ client_id: 'Iv1.registry', ...params })) {
    url.searchParams.set(key, value);
  }
  const walked = await followRedirects(url, { stopAt: (u) => u.startsWith(CALLBACK) });
  expect(walked.stopped).toBe(true);
  return new URL(walked.url).searchParams;
}

async function exchange(
  fake: FakeGitHub,
  fields: Record<string, string>,
  as: 'form' | 'json' = 'form',
): Promise<Record<string, string>> {
  const body = { client_id: 'Iv1.registry', client_secret: 'shh', ...fields };
  const res = await fetch(`${fake.webBase}/login/oauth/access_token`, {
    method: 'POST',
    headers: {
      accept: 'application/json',
      'content-type': as === 'json' ? 'application/json' : 'application/x-www-form-urlencoded',
    },
    body: as === 'json' ? JSON.stringify(body) : new URLSearchParams(body),
  });
  expect(res.status).toBe(200);
  return (await res.json()) as Record<string, string>;
}

const api = (fake: FakeGitHub, path: string, token?: string, scheme = 'Bearer') =>
  fetch(`${fake.apiUrl}${path}`, { headers: token ? { authorization: `${scheme} ${token}` } : {} });

describe('GitHub OAuth web flow', () => {
  it('signs in the chosen user with PKCE; the token reads their profile, emails and org roles', async () => {
    gh.addRepo({
      owner: 'octo-org',
      name: 'skills',
      defaultBranch: 'main',
      stars: 0,
      license: null,
      homepage: null,
      files: {},
    });
    gh.addUser('pat-octocat', 'octocat', { 'octo-org/skills': 'push' });
    gh.setProfile('octocat', {
      name: 'The Octocat',
      email: null,
      emails: [
        { email: 'octocat@example.test', primary: true, verified: true },
        { email: 'old@example.test', primary: false, verified: false },
      ],
    });
    gh.addOrgMember('octo-org', 'octocat', 'admin');
    gh.addOrgMember('Other-Org', 'octocat', 'member');
    gh.nextOAuthLogin('octocat');

    const { verifier, challenge } = pkce();
    const query = await authorize(gh, {
      redirect_uri: CALLBACK,
      state: 'st-1',
      scope: 'read:user user:email read:org',
      code_challenge: challenge,
      code_challenge_method: 'S256',
    });
    expect(query.get('state')).toBe('st-1');
    const code = query.get('code') as string;
    const token = await exchange(gh, { code, redirect_uri: CALLBACK, code_verifier: verifier });
    expect(token).toMatchObject({ token_type: 'bearer', scope: 'read:user,user:email,read:org' });
    expect(token.access_token).toMatch(/^gho_[A-Za-z0-9]{36}$/);

    const me = await api(gh, '/user', token.access_token);
    expect(me.headers.get('x-oauth-scopes')).toBe('read:user, user:email, read:org');
    expect(await me.json()).toMatchObject({
      login: 'octocat',
      id: gh.accountId('octocat'),
      name: 'The Octocat',
      email: null,
    });
    expect(await (await api(gh, '/user/emails', token.access_token, 'token')).json()).toEqual([
      { email: 'octocat@example.test', primary: true, verified: true, visibility: 'public' },
      { email: 'old@example.test', primary: false, verified: false, visibility: null },
    ]);
    const orgs = (await (await api(gh, '/user/orgs', token.access_token)).json()) as Array<{ login: string }>;
    expect(orgs.map((o) => o.login).sort()).toEqual(['Other-Org', 'octo-org']);
    const membership = await api(gh, '/user/memberships/orgs/OCTO-ORG', token.access_token);
    expect(await membership.json()).toMatchObject({
      state: 'active',
      role: 'admin',
      organization: { login: 'octo-org', id: gh.accountId('octo-org') },
      user: { login: 'octocat' },
    });
    expect((await api(gh, '/user/memberships/orgs/nowhere', token.access_token)).status).toBe(404);
    gh.removeOrgMember('Other-Org', 'octocat');
    expect((await api(gh, '/user/memberships/orgs/other-org', token.access_token)).status).toBe(404);

    // The OAuth token is the same user as addUser's token: it sees the repository permissions too.
    const repo = (await (await api(gh, '/repos/octo-org/skills', token.access_token)).json()) as {
      permissions: Record<string, boolean>;
    };
    expect(repo.permissions).toMatchObject({ push: true, maintain: false });
  });

  it('takes the login parameter, a JSON body, and answers form-encoded without Accept: JSON', async () => {
    const query = await authorize(gh, { login: 'hubot', scope: 'read:user' });
    const res = await fetch(`${gh.webBase}/login/oauth/access_token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ client_id: 'Iv1.registry', client_secret: 'shh', code: query.get('code') }),
    });
    expect(res.headers.get('content-type')).toMatch(/application\/x-www-form-urlencoded/);
    const token = new URLSearchParams(await res.text());
    expect(token.get('token_type')).toBe('bearer');
    const me = (await (await api(gh, '/user', token.get('access_token') as string)).json()) as {
      login: string;
      email: string;
    };
    expect(me).toMatchObject({ login: 'hubot', email: 'hubot@users.example' });
    // Without user:email the emails are hidden, as GitHub hides them (404).
    expect((await api(gh, '/user/emails', token.get('access_token') as string)).status).toBe(404);
  });

  it('serves the login endpoints at the root and the API under /api/v3 for GitHub Enterprise', async () => {
    ghe.nextOAuthLogin('enterprise-user');
    const { verifier, challenge } = pkce();
    const query = await authorize(ghe, { code_challenge: challenge, code_challenge_method: 'S256' });
    const token = await exchange(ghe, { code: query.get('code') as string, code_verifier: verifier }, 'json');
    expect(ghe.apiUrl).toBe(`${ghe.webBase}/api/v3`);
    const me = (await (await api(ghe, '/user', token.access_token)).json()) as { login: string };
    expect(me.login).toBe('enterprise-user');
  });
});

describe('GitHub OAuth web flow: failures', () => {
  it('a wrong code_verifier is bad_verification_code, and the code is spent', async () => {
    gh.nextOAuthLogin('octocat');
    const { verifier, challenge } = pkce();
    const query = await authorize(gh, { code_challenge: challenge, code_challenge_method: 'S256' });
    const code = query.get('code') as string;
    expect(await exchange(gh, { code, code_verifier: pkce().verifier })).toMatchObject({
      error: 'bad_verification_code',
    });
    expect(await exchange(gh, { code })).toMatchObject({ error: 'bad_verification_code' });
    expect(await exchange(gh, { code, code_verifier: verifier })).toMatchObject({
      error: 'bad_verification_code',
    });
  });

  it('a code exchanged once is refused the second time', async () => {
    gh.nextOAuthLogin('octocat');
    const code = (await authorize(gh, {})).get('code') as string;
    expect(await exchange(gh, { code })).toHaveProperty('access_token');
    expect(await exchange(gh, { code })).toEqual({
      error: 'bad_verification_code',
      error_description: 'The code passed is incorrect or expired.',
      error_uri: expect.stringContaining('bad-verification-code'),
    });
  });

  it('a wrong client secret is incorrect_client_credentials', async () => {
    gh.nextOAuthLogin('octocat');
    const code = (await authorize(gh, {})).get('code') as string;
    expect(await exchange(gh, { code, client_secret: 'guess' })).toMatchObject({
      error: 'incorrect_client_credentials',
    });
  });

  it('a redirect_uri other than the one authorized is redirect_uri_mismatch', async () => {
    gh.nextOAuthLogin('octocat');
    const code = (await authorize(gh, { redirect_uri: `${CALLBACK}/deeper` })).get('code') as string;
    expect(await exchange(gh, { code, redirect_uri: CALLBACK })).toMatchObject({
      error: 'redirect_uri_mismatch',
    });
  });

  it('a denied authorization comes back as error=access_denied with the state', async () => {
    gh.nextOAuthLogin({ error: 'access_denied' });
    const query = await authorize(gh, { state: 'st-2' });
    expect(query.get('error')).toBe('access_denied');
    expect(query.get('state')).toBe('st-2');
    expect(query.get('code')).toBeNull();
  });

  it('a redirect_uri on another host gets redirect_uri_mismatch at the registered callback', async () => {
    gh.nextOAuthLogin('octocat');
    const query = await authorize(gh, { redirect_uri: 'http://evil.example/cb', state: 'st-3' });
    expect(query.get('error')).toBe('redirect_uri_mismatch');
    expect(query.get('code')).toBeNull();
  });

  it('the user APIs refuse no token (401) and a revoked OAuth token (401 Bad credentials)', async () => {
    expect((await api(gh, '/user')).status).toBe(401);
    gh.nextOAuthLogin('octocat');
    const code = (await authorize(gh, {})).get('code') as string;
    const { access_token: token } = await exchange(gh, { code });
    expect((await api(gh, '/user', token)).status).toBe(200);
    gh.revoked.add(token as string);
    const refused = await api(gh, '/user', token);
    expect(refused.status).toBe(401);
    expect(await refused.json()).toMatchObject({ message: 'Bad credentials' });
  });
});
