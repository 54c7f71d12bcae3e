import { createHash, randomBytes } from 'node:crypto';
import type { RequestListener } from 'node:http';
import {
  CliTokenResponseSchema,
  CreatedTokenSchema,
  MeSchema,
  TokenListSchema,
  TokenSummarySchema,
} from '@pkgreg/contracts';
import { TEST_REDIS_URL, testKeyPrefix } from '@pkgreg/db/testing';
import { useTestDatabase } from '@pkgreg/db/vitest';
import { createLogger } from '@pkgreg/server-kit';
import { Redis } from 'ioredis';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../src/app.js';
import { loadEnv } from '../src/env.js';

// docs/cli-auth.md: the CLI's browser sign-in (GET/POST /api/cli/authorize, POST /api/cli/token), the
// device flow's session bearer minting a token, tokens that create narrower tokens, and
// DELETE /api/tokens/current; with the security cases of each.

const PUBLIC_URL = 'http://registry.test';
const ORIGIN = PUBLIC_URL;
const REDIRECT = 'http://127.0.0.1:45678/callback';
const database = useTestDatabase();
const prefix = testKeyPrefix('cli-login');
let redis: Redis;
let app: RequestListener;
const logged: string[] = [];
const logger = createLogger('cli-login-test', 'debug', { write: (line: string) => void logged.push(line) });

beforeAll(async () => {
  redis = new Redis(TEST_REDIS_URL, { lazyConnect: true, keyPrefix: `${prefix}:` });
  const env = loadEnv({ REGISTRY_PUBLIC_URL: PUBLIC_URL, DEV_SIGN_IN: 'true', TOKEN_MAX_DAYS: '60' });
  app = createApp({ db: database.db, redis, logger, env });
});

afterAll(() => redis?.disconnect());

async function signIn(handle: string) {
  const agent = request.agent(app);
  const res = await agent.post('/api/auth/dev/sign-in').set('Origin', ORIGIN).send({ handle });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return agent;
}

function pkce() {
  const verifier = randomBytes(32).toString('base64url');
  const challenge = createHash('sha256').update(verifier).digest('base64url');
  return { verifier, challenge };
}

function authorizeQuery(challenge: string, overrides: Record<string, string> = {}) {
  return {
    redirect_uri: REDIRECT,
    state: 'state-0123456789abcdef',
    code_challenge: challenge,
    code_challenge_method: 'S256',
    ...overrides,
  };
}

/** Approves a CLI sign-in as the agent's person: the code the 303 carries to the loopback redirect. */
async function approve(agent: request.Agent, challenge: string, redirect = REDIRECT): Promise<string> {
  const res = await agent
    .post('/api/cli/authorize')
    .set('Origin', ORIGIN)
    .type('form')
    .send({ ...authorizeQuery(challenge, { redirect_uri: redirect }), decision: 'approve' });
  expect(res.status, res.text).toBe(303);
  const location = new URL(String(res.headers.location));
  expect(`${location.origin}${location.pathname}`).toBe(redirect);
  expect(location.searchParams.get('state')).toBe('state-0123456789abcdef');
  return String(location.searchParams.get('code'));
}

function exchange(body: Record<string, unknown>) {
  return request(app)
    .post('/api/cli/token')
    .send({ redirect_uri: REDIRECT, name: 'pkgreg CLI on test-host', ...body });
}

async function cliToken(handle: string) {
  const agent = await signIn(handle);
  const { verifier, challenge } = pkce();
  const code = await approve(agent, challenge);
  const res = await exchange({ code, code_verifier: verifier });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return { agent, ...CliTokenResponseSchema.parse(res.body) };
}

describe('browser sign-in: happy paths', () => {
  it('without a session, the page links to the web sign-in (next = this page) and offers the dev sign-in', async () => {
    const { challenge } = pkce();
    const res = await request(app).get('/api/cli/authorize').query(authorizeQuery(challenge));
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.headers['x-frame-options']).toBe('DENY');
    const csp = String(res.headers['content-security-policy']);
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toMatch(/unsafe-inline|https?:\/\/(?!127)/);
    const link = /href="([^"]+)"/.exec(res.text)?.[1]?.replace(/&amp;/g, '&') ?? '';
    const signIn = new URL(link);
    expect(`${signIn.origin}${signIn.pathname}`).toBe(`${PUBLIC_URL}/sign-in`);
    const next = new URL(String(signIn.searchParams.get('next')));
    expect(next.pathname).toBe('/api/cli/authorize');
    expect(next.searchParams.get('redirect_uri')).toBe(REDIRECT);
    expect(res.text).toContain('/api/auth/dev/sign-in');
    // Self-contained: no external script, style, image or font.
    expect(res.text).not.toMatch(/<(script|link|img)[^>]+(src|href)=/);
  });

  it('with a session, the page asks to approve as the account; approving mints a publish token for it', async () => {
    const agent = await signIn('cli-ada');
    const { verifier, challenge } = pkce();
    const page = await agent.get('/api/cli/authorize').query(authorizeQuery(challenge));
    expect(page.status).toBe(200);
    expect(page.text).toContain('Sign in pkgreg CLI on this computer as cli-ada@dev.pkgreg.invalid?');
    expect(page.text).toContain('value="approve"');
    expect(page.text).toContain('value="deny"');
    // The form may post here and be redirected to the CLI's loopback address only.
    expect(String(page.headers['content-security-policy'])).toContain(
      "form-action 'self' http://127.0.0.1:45678",
    );

    const code = await approve(agent, challenge);
    expect(code).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const ttl = await redis.ttl(
      `pkgreg:registry:cli-code:${createHash('sha256').update(code).digest('hex')}`,
    );
    expect(ttl).toBeGreaterThan(280);
    expect(ttl).toBeLessThanOrEqual(300);
    const res = await exchange({ code, code_verifier: verifier });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const answer = CliTokenResponseSchema.parse(res.body);
    expect(answer.account.email).toBe('cli-ada@dev.pkgreg.invalid');
    // 90 days, cut to this registry's TOKEN_MAX_DAYS (60).
    const days = (Date.parse(answer.expiresAt) - Date.now()) / 86_400_000;
    expect(days).toBeGreaterThan(59.9);
    expect(days).toBeLessThanOrEqual(60);
    const who = await request(app).get('/api/me').set('Authorization', `Bearer ${answer.token}`);
    expect(MeSchema.parse(who.body)).toMatchObject({
      account: { email: 'cli-ada@dev.pkgreg.invalid' },
      via: 'token',
      token: { permission: 'publish' },
    });
    const list = TokenListSchema.parse((await agent.get('/api/tokens')).body);
    expect(list.data[0]).toMatchObject({
      name: 'pkgreg CLI on test-host',
      permission: 'publish',
      scopes: [],
    });
    expect(logged.join('\n')).not.toContain(answer.token);
    expect(logged.join('\n')).not.toContain(code);
  });

  it('Deny sends access_denied and the state back, and issues no code', async () => {
    const agent = await signIn('cli-denier');
    const { challenge } = pkce();
    const keys = await redis.keys(`${prefix}:pkgreg:registry:cli-code:*`);
    const res = await agent
      .post('/api/cli/authorize')
      .set('Origin', ORIGIN)
      .type('form')
      .send({ ...authorizeQuery(challenge), decision: 'deny' });
    expect(res.status).toBe(303);
    expect(res.headers.location).toBe(`${REDIRECT}?error=access_denied&state=state-0123456789abcdef`);
    expect(await redis.keys(`${prefix}:pkgreg:registry:cli-code:*`)).toHaveLength(keys.length);
  });

  it('an IPv6 loopback redirect works too', async () => {
    const agent = await signIn('cli-v6');
    const { verifier, challenge } = pkce();
    const redirect = 'http://[::1]:5000/callback';
    const code = await approve(agent, challenge, redirect);
    const res = await exchange({ code, code_verifier: verifier, redirect_uri: redirect });
    expect(res.status).toBe(201);
  });
});

describe('browser sign-in: security', () => {
  it('a redirect_uri other than loopback http /callback is refused by the page and by the post', async () => {
    const agent = await signIn('cli-redirects');
    const { challenge } = pkce();
    for (const redirect of [
      'https://127.0.0.1:4000/callback',
      'http://localhost:4000/callback',
      'http://evil.example:4000/callback',
      'http://127.0.0.1.evil.example:4000/callback',
      'http://127.0.0.1:4000/other',
      'http://127.0.0.1/callback',
      'http://127.0.0.1:4000/callback?x=1',
      'http://user@127.0.0.1:4000/callback',
    ]) {
      const page = await agent
        .get('/api/cli/authorize')
        .query(authorizeQuery(challenge, { redirect_uri: redirect }));
      expect({ redirect, status: page.status }).toEqual({ redirect, status: 400 });
      expect(page.text).not.toContain('value="approve"');
      const post = await agent
        .post('/api/cli/authorize')
        .set('Origin', ORIGIN)
        .type('form')
        .send({ ...authorizeQuery(challenge, { redirect_uri: redirect }), decision: 'approve' });
      expect({ redirect, status: post.status }).toEqual({ redirect, status: 400 });
    }
    for (const bad of <Record<string, string>[]>[
      { code_challenge_method: 'plain' },
      { code_challenge: 'short' },
      { state: 'x' },
    ]) {
      const page = await agent.get('/api/cli/authorize').query(authorizeQuery(challenge, bad));
      expect(page.status).toBe(400);
    }
  });

  it('approving needs a session: none is a 401, a cross-site post a 403, a token (even publish) a 403', async () => {
    const { challenge } = pkce();
    const form = { ...authorizeQuery(challenge), decision: 'approve' };
    const anonymous = await request(app)
      .post('/api/cli/authorize')
      .set('Origin', ORIGIN)
      .type('form')
      .send(form);
    expect(anonymous.status).toBe(401);
    const { agent, token } = await cliToken('cli-csrf');
    const crossSite = await agent
      .post('/api/cli/authorize')
      .set('Origin', 'https://evil.example')
      .type('form')
      .send(form);
    expect(crossSite.status).toBe(403);
    const withToken = await request(app)
      .post('/api/cli/authorize')
      .set('Authorization', `Bearer ${token}`)
      .type('form')
      .send(form);
    expect(withToken.status).toBe(403);
    // The page offers no approval to a token either.
    const page = await request(app)
      .get('/api/cli/authorize')
      .set('Authorization', `Bearer ${token}`)
      .query(authorizeQuery(challenge));
    expect(page.text).not.toContain('value="approve"');
  });

  it('a code_verifier that does not match is refused, and the code is gone after it', async () => {
    const agent = await signIn('cli-pkce');
    const { verifier, challenge } = pkce();
    const code = await approve(agent, challenge);
    const wrong = await exchange({ code, code_verifier: pkce().verifier });
    expect(wrong.status).toBe(400);
    expect(wrong.body.error).toMatch(/code_verifier/);
    const retry = await exchange({ code, code_verifier: verifier });
    expect(retry.status).toBe(400);
    expect(retry.body.error).toMatch(/unknown, already used or expired/);
  });

  it('a code is used once', async () => {
    const agent = await signIn('cli-reuse');
    const { verifier, challenge } = pkce();
    const code = await approve(agent, challenge);
    expect((await exchange({ code, code_verifier: verifier })).status).toBe(201);
    const again = await exchange({ code, code_verifier: verifier });
    expect(again.status).toBe(400);
    expect(again.body.error).toMatch(/already used/);
  });

  it('a code is bound to its redirect_uri', async () => {
    const agent = await signIn('cli-binding');
    const { verifier, challenge } = pkce();
    const code = await approve(agent, challenge);
    const res = await exchange({
      code,
      code_verifier: verifier,
      redirect_uri: 'http://127.0.0.1:45679/callback',
    });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatch(/another redirect_uri/);
  });

  it('an unknown code, or a malformed body, is a 400 and creates nothing', async () => {
    const before = await database.db.selectFrom('access_tokens').select('id').execute();
    expect((await exchange({ code: 'nope', code_verifier: pkce().verifier })).status).toBe(400);
    expect((await exchange({ code: 'nope', code_verifier: 'short' })).status).toBe(400);
    expect((await request(app).post('/api/cli/token').send({})).status).toBe(400);
    const after = await database.db.selectFrom('access_tokens').select('id').execute();
    expect(after).toHaveLength(before.length);
  });
});

describe('the device flow: a session bearer mints the CLI token, then signs out', () => {
  it('device code approved in the browser; its session token creates a token and is ended by sign-out', async () => {
    const code = await request(app).post('/api/auth/device/code').send({ client_id: 'pkgreg-cli' });
    expect(code.status).toBe(200);
    const agent = await signIn('cli-device');
    expect((await agent.get('/api/auth/device').query({ user_code: code.body.user_code })).status).toBe(200);
    const approved = await agent
      .post('/api/auth/device/approve')
      .set('Origin', ORIGIN)
      .send({ userCode: code.body.user_code });
    expect(approved.status).toBe(200);
    const grant = await request(app).post('/api/auth/device/token').send({
      grant_type: 'urn:ietf:params:oauth:grant-type:device_code',
      device_code: code.body.device_code,
      client_id: 'pkgreg-cli',
    });
    expect(grant.status).toBe(200);
    const session = `Bearer ${grant.body.access_token}`;
    const created = await request(app)
      .post('/api/tokens')
      .set('Authorization', session)
      .send({ name: 'pkgreg CLI on test-host', permission: 'publish', expiresInDays: 60 });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const token = CreatedTokenSchema.parse(created.body).token;
    expect(
      (await request(app).post('/api/auth/sign-out').set('Authorization', session).send({})).status,
    ).toBe(200);
    expect((await request(app).get('/api/tokens').set('Authorization', session)).status).toBe(401);
    expect((await request(app).get('/api/me').set('Authorization', `Bearer ${token}`)).status).toBe(200);
  });
});

describe('tokens managed with a token (npm-like) and DELETE /api/tokens/current', () => {
  it("the CLI's publish token without limits lists, creates narrower tokens and revokes", async () => {
    const { token } = await cliToken('cli-manager');
    const auth = `Bearer ${token}`;
    const read = await request(app)
      .post('/api/tokens')
      .set('Authorization', auth)
      .send({ name: 'ci read', permission: 'read', scopes: ['team-x'], expiresInDays: 30 });
    expect(read.status, JSON.stringify(read.body)).toBe(201);
    const readToken = CreatedTokenSchema.parse(read.body);
    const list = TokenListSchema.parse(
      (await request(app).get('/api/tokens').set('Authorization', auth)).body,
    );
    expect(list.data.map((t) => t.name)).toEqual(['ci read', 'pkgreg CLI on test-host']);
    // Never longer-lived than itself.
    const outliving = await request(app)
      .post('/api/tokens')
      .set('Authorization', auth)
      .send({ name: 'long', permission: 'read', expiresInDays: 60 });
    expect(outliving.status).toBe(403);
    expect(outliving.body.error).toMatch(/outlive/);
    const revoked = await request(app).delete(`/api/tokens/${readToken.id}`).set('Authorization', auth);
    expect(revoked.status).toBe(200);
    expect((await request(app).get('/api/me').set('Authorization', `Bearer ${readToken.token}`)).status).toBe(
      401,
    );
  });

  it('a limited publish token creates only tokens within its limits and cannot list or revoke; a read token creates none', async () => {
    const { token } = await cliToken('cli-limited');
    const limited = CreatedTokenSchema.parse(
      (
        await request(app)
          .post('/api/tokens')
          .set('Authorization', `Bearer ${token}`)
          .send({ name: 'scoped', permission: 'publish', scopes: ['team-y'], expiresInDays: 30 })
      ).body,
    );
    const auth = `Bearer ${limited.token}`;
    const create = (body: Record<string, unknown>) =>
      request(app)
        .post('/api/tokens')
        .set('Authorization', auth)
        .send({ name: 'child', permission: 'read', expiresInDays: 10, ...body });
    expect((await create({ scopes: ['team-y'] })).status).toBe(201);
    expect((await create({ packages: ['team-y/runbook'] })).status).toBe(201);
    const wider = await create({});
    expect(wider.status).toBe(403);
    expect(wider.body.error).toMatch(/no wider than itself/);
    expect((await create({ scopes: ['team-z'] })).status).toBe(403);
    expect((await create({ packages: ['team-z/x'] })).status).toBe(403);
    expect((await request(app).get('/api/tokens').set('Authorization', auth)).status).toBe(403);
    expect((await request(app).delete(`/api/tokens/${limited.id}`).set('Authorization', auth)).status).toBe(
      403,
    );

    const readChild = CreatedTokenSchema.parse((await create({ scopes: ['team-y'] })).body);
    const fromRead = await request(app)
      .post('/api/tokens')
      .set('Authorization', `Bearer ${readChild.token}`)
      .send({ name: 'grandchild', permission: 'read', scopes: ['team-y'], expiresInDays: 1 });
    expect(fromRead.status).toBe(403);
    expect(fromRead.body.error).toMatch(/read token/);
  });

  it('a token bound to address ranges creates only tokens bound within them', async () => {
    const { agent } = await cliToken('cli-cidr');
    const bound = CreatedTokenSchema.parse(
      (
        await agent
          .post('/api/tokens')
          .set('Origin', ORIGIN)
          .send({
            name: 'bound',
            permission: 'publish',
            allowedCidrs: ['127.0.0.0/8', '::ffff:127.0.0.1'],
            expiresInDays: 30,
          })
      ).body,
    );
    const create = (allowedCidrs: string[]) =>
      request(app)
        .post('/api/tokens')
        .set('Authorization', `Bearer ${bound.token}`)
        .send({ name: 'child', permission: 'read', allowedCidrs, expiresInDays: 10 });
    const unbound = await create([]);
    // supertest connects from 127.0.0.1 (or ::ffff:127.0.0.1), inside the ranges.
    expect(unbound.status, JSON.stringify(unbound.body)).toBe(403);
    expect(unbound.body.error).toMatch(/bound to/);
    expect((await create(['127.0.0.0/8'])).status).toBe(201);
  });

  it('DELETE /api/tokens/current revokes the token sent, of any permission; without one it is a 401', async () => {
    const { agent, token } = await cliToken('cli-logout');
    const read = CreatedTokenSchema.parse(
      (
        await agent
          .post('/api/tokens')
          .set('Origin', ORIGIN)
          .send({ name: 'r', permission: 'read', expiresInDays: 5 })
      ).body,
    );
    for (const secret of [token, read.token]) {
      const res = await request(app).delete('/api/tokens/current').set('Authorization', `Bearer ${secret}`);
      expect(res.status).toBe(200);
      expect(TokenSummarySchema.parse(res.body).revokedAt).not.toBeNull();
      const after = await request(app).get('/api/me').set('Authorization', `Bearer ${secret}`);
      expect(after.status).toBe(401);
      expect(after.body.error).toMatch(/revoked/);
    }
    expect((await request(app).delete('/api/tokens/current')).status).toBe(401);
    // A session alone has no current token to revoke.
    expect((await agent.delete('/api/tokens/current').set('Origin', ORIGIN)).status).toBe(401);
  });
});
