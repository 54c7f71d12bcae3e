import type { RequestListener } from 'node:http';
import { AuthOptionsSchema } from '@pkgreg/contracts';
import { TEST_REDIS_URL, testKeyPrefix } from '@pkgreg/db/testing';
import { useTestDatabase } from '@pkgreg/db/vitest';
import { createLogger } from '@pkgreg/server-kit';
import { Redis } from 'ioredis';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { authOptionsOf } from '../src/accounts/auth-options.routes.js';
import { createApp } from '../src/app.js';
import { loadEnv } from '../src/env.js';

// GET /api/auth-options (docs/accounts.md): the sign-in methods the web UI shows, from the same env
// better-auth is configured with.

const database = useTestDatabase();
const prefix = testKeyPrefix('auth-options');
let redis: Redis;
const logger = createLogger('auth-options-test', 'warn', { write: () => {} });

const GITHUB = { GITHUB_OAUTH_CLIENT_ID: 'Iv1.client', GITHUB_OAUTH_CLIENT_SECRET: 'secret-of-the-app' };
const OIDC = {
  OIDC_SIGN_IN_DISCOVERY_URL: 'http://127.0.0.1:9/.well-known/openid-configuration',
  OIDC_SIGN_IN_CLIENT_ID: 'pkgreg',
  OIDC_SIGN_IN_CLIENT_SECRET: 'oidc-secret',
  OIDC_SIGN_IN_NAME: 'Acme SSO',
};

function appWith(source: Record<string, string>): RequestListener {
  return createApp({
    db: database.db,
    redis,
    logger,
    env: loadEnv({ REGISTRY_PUBLIC_URL: 'http://registry.test', ...source }),
  });
}

beforeAll(() => {
  redis = new Redis(TEST_REDIS_URL, { lazyConnect: true, keyPrefix: `${prefix}:` });
});

afterAll(() => redis?.disconnect());

describe('GET /api/auth-options', () => {
  it('the development sign-in alone, to anyone, never cached', async () => {
    const res = await request(appWith({ DEV_SIGN_IN: 'true' })).get('/api/auth-options');
    expect(res.status).toBe(200);
    expect(res.headers['cache-control']).toMatch(/no-store/);
    expect(AuthOptionsSchema.parse(res.body)).toEqual({ devSignIn: true, providers: [] });
  });

  it('GitHub and the OIDC provider under its configured name, no development sign-in by default', async () => {
    const res = await request(appWith({ ...GITHUB, ...OIDC })).get('/api/auth-options');
    expect(res.status).toBe(200);
    expect(AuthOptionsSchema.parse(res.body)).toEqual({
      devSignIn: false,
      providers: [
        { id: 'github', name: 'GitHub' },
        { id: 'oidc', name: 'Acme SSO' },
      ],
    });
    // No setting of a provider's beyond its name reaches the page.
    expect(JSON.stringify(res.body)).not.toMatch(/secret|Iv1\.client|127\.0\.0\.1/);
  });

  it('a signed-in cookie changes nothing: the answer is the same for everyone', async () => {
    const app = appWith({ DEV_SIGN_IN: 'true', ...GITHUB });
    const agent = request.agent(app);
    await agent
      .post('/api/auth/dev/sign-in')
      .set('Origin', 'http://registry.test')
      .send({ handle: 'ada' })
      .expect(200);
    const signedIn = await agent.get('/api/auth-options');
    const anonymous = await request(app).get('/api/auth-options');
    expect(signedIn.body).toEqual(anonymous.body);
    expect(signedIn.body).toEqual({ devSignIn: true, providers: [{ id: 'github', name: 'GitHub' }] });
  });

  it("a provider it lists starts with the call the sign-in page makes (better-auth's /sign-in/social)", async () => {
    const app = appWith({ ...GITHUB, GITHUB_WEB_URL: 'https://github.example' });
    const options = AuthOptionsSchema.parse((await request(app).get('/api/auth-options')).body);
    const res = await request(app)
      .post('/api/auth/sign-in/social')
      .set('Origin', 'http://registry.test')
      .send({
        provider: options.providers[0]?.id,
        callbackURL: 'http://registry.test/settings/tokens',
        errorCallbackURL: 'http://registry.test/sign-in?error=provider',
        disableRedirect: true,
      });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const url = new URL(res.body.url);
    expect(url.origin + url.pathname).toBe('https://github.example/login/oauth/authorize');
    expect(url.searchParams.get('client_id')).toBe('Iv1.client');
    expect(url.searchParams.get('redirect_uri')).toBe('http://registry.test/api/auth/callback/github');
  });

  it('never offers the development sign-in in production, whatever the flag', () => {
    const env = { ...loadEnv({ DEV_SIGN_IN: 'true' }), NODE_ENV: 'production' as const };
    expect(authOptionsOf(env).devSignIn).toBe(false);
  });
});
