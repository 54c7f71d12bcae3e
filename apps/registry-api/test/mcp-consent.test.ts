import { createHash, randomBytes } from 'node:crypto';
import type { RequestListener } from 'node:http';
import { SCOPE_DESCRIPTIONS, SCOPES } from '@pkgreg/contracts';
import type { Database } from '@pkgreg/db';
import { TEST_REDIS_URL, testKeyPrefix } from '@pkgreg/db/testing';
import { useTestDatabase } from '@pkgreg/db/vitest';
import { createLogger } from '@pkgreg/server-kit';
import { Redis } from 'ioredis';
import type { Insertable } from 'kysely';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../src/app.js';
import { loadEnv } from '../src/env.js';
import { createTokenAs, signInAs } from './account-helpers.js';

// docs/accounts.md, "Consent for MCP clients": GET/POST /api/mcp/consent/{id}, the registry's half of an
// agent app's sign-in to the edge. The edge's half (inserting the request, consuming the decision) is
// played here by inserting rows of edge_consent_requests directly.

const PUBLIC_URL = 'http://registry.test';
const ORIGIN = PUBLIC_URL;
const EDGE = 'https://mcp.example';
const database = useTestDatabase();
const prefix = testKeyPrefix('mcp-consent');
let redis: Redis;
let app: RequestListener;
/** The same registry without EDGE_PUBLIC_BASE_URL: consent is off. */
let appOff: RequestListener;
const logged: string[] = [];
const logger = createLogger('mcp-consent-test', 'debug', { write: (line: string) => void logged.push(line) });

beforeAll(() => {
  redis = new Redis(TEST_REDIS_URL, { lazyConnect: true, keyPrefix: `${prefix}:` });
  const env = {
    REGISTRY_PUBLIC_URL: PUBLIC_URL,
    DEV_SIGN_IN: 'true',
    SIGN_IN_PER_MINUTE: '1000',
  };
  // The trailing slash is dropped: return URLs have no `//`.
  app = createApp({
    db: database.db,
    redis,
    logger,
    env: loadEnv({ ...env, EDGE_PUBLIC_BASE_URL: `${EDGE}/` }),
  });
  appOff = createApp({ db: database.db, redis, logger, env: loadEnv(env) });
});

afterAll(() => redis?.disconnect());

const sha256Hex = (value: string) => createHash('sha256').update(value).digest('hex');
const signIn = (handle: string) => signInAs(app, ORIGIN, handle);
const email = (handle: string) => `${handle}@dev.pkgreg.invalid`;

async function accountId(handle: string): Promise<string> {
  const row = await database.db
    .selectFrom('auth_user')
    .select('id')
    .where('email', '=', email(handle))
    .executeTakeFirstOrThrow();
  return row.id;
}

type RequestRow = Insertable<Database['edge_consent_requests']>;

/** What the edge does on an authorization request: a row, and the id it sends the browser with. */
async function edgeRequest(overrides: Partial<RequestRow> = {}): Promise<{ id: string; uid: string }> {
  const id = randomBytes(32).toString('base64url');
  const uid = overrides.interaction_uid ?? randomBytes(16).toString('base64url');
  await database.db
    .insertInto('edge_consent_requests')
    .values({
      id_hash: sha256Hex(id),
      interaction_uid: uid,
      client_id: 'https://app.example/oauth/client.json',
      client_kind: 'metadata_document',
      client_name: 'Example Agent',
      client_uri: 'https://app.example',
      logo_uri: 'https://app.example/logo.png',
      redirect_host: 'app.example',
      resource: `${EDGE}/mcp`,
      scopes: [SCOPES.registryRead, SCOPES.stmRead],
      binding_hash: sha256Hex(randomBytes(16).toString('hex')),
      expires_at: new Date(Date.now() + 600_000),
      ...overrides,
    })
    .execute();
  return { id, uid };
}

function requestRow(id: string) {
  return database.db
    .selectFrom('edge_consent_requests')
    .selectAll()
    .where('id_hash', '=', sha256Hex(id))
    .executeTakeFirstOrThrow();
}

function delegation(handleId: string, clientId: string) {
  return database.db
    .selectFrom('edge_delegations')
    .selectAll()
    .where('account_id', '=', handleId)
    .where('client_id', '=', clientId)
    .executeTakeFirst();
}

const page = (agent: { get(path: string): request.Test }, id: string) => agent.get(`/api/mcp/consent/${id}`);

const answer = (agent: request.Agent, id: string, decision: string, origin = ORIGIN) =>
  agent.post(`/api/mcp/consent/${id}`).set('Origin', origin).type('form').send({ decision });

/** The edge's return URL a 303 names, and its code (checked to be of the form the edge expects). */
function edgeReturn(location: unknown, uid: string): string {
  const url = String(location);
  const match = /^https:\/\/mcp\.example\/mcp\/interaction\/([^/]+)\/return\?c=([A-Za-z0-9_-]{43})$/.exec(
    url,
  );
  expect(match, url).not.toBeNull();
  expect(decodeURIComponent(match?.[1] ?? '')).toBe(uid);
  return match?.[2] ?? '';
}

/** A page with its per-answer nonces blanked: what must match byte for byte. */
const withoutNonces = (text: string) =>
  text.replace(/nonce-[A-Za-z0-9+/=]+/g, 'nonce-N').replace(/nonce="[A-Za-z0-9+/=]+"/g, 'nonce="N"');

const UNKNOWN = 'This sign-in request is unknown or has expired';

describe('consent: happy paths', () => {
  it('without a session, the page links to the web sign-in (next = this page, a path), never to the form', async () => {
    const { id } = await edgeRequest();
    const res = await page(request(app), id);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.headers['x-frame-options']).toBe('DENY');
    expect(res.headers['referrer-policy']).toBe('no-referrer');
    const csp = String(res.headers['content-security-policy']);
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toContain('unsafe-inline');
    const link = /href="([^"]+)"/.exec(res.text)?.[1]?.replace(/&amp;/g, '&') ?? '';
    const signInUrl = new URL(link);
    expect(`${signInUrl.origin}${signInUrl.pathname}`).toBe(`${PUBLIC_URL}/sign-in`);
    expect(signInUrl.searchParams.get('next')).toBe(`/api/mcp/consent/${id}`);
    expect(res.text).toContain('/api/auth/dev/sign-in');
    expect(res.text).not.toContain('value="allow"');
    // Nothing is claimed by looking.
    expect((await requestRow(id)).account_id).toBeNull();
  });

  it('with a session, the page claims the request and shows the app, who vouches, where it goes back, the scopes and the account', async () => {
    const agent = await signIn('consent-ada');
    const { id } = await edgeRequest();
    const res = await page(agent, id);
    expect(res.status, res.text).toBe(200);
    expect(res.text).toContain('Allow Example Agent to use pkgreg as you?');
    expect(res.text).toContain(
      'Identified by <strong>app.example</strong>. Its name and logo are its own claim.',
    );
    expect(res.text).toContain('Then you go back to <strong>app.example</strong>');
    for (const scope of [SCOPES.registryRead, SCOPES.stmRead] as const) {
      expect(res.text).toContain(`${SCOPE_DESCRIPTIONS[scope].replace(/'/g, '&#39;')} <code>${scope}</code>`);
    }
    expect(res.text).toContain(`Signed in as ${email('consent-ada')}.`);
    expect(res.text).toContain(`<form method="post" action="/api/mcp/consent/${id}">`);
    expect(res.text).toContain('value="allow"');
    expect(res.text).toContain('value="deny"');
    // The logo of an app identified by its metadata document, from https, sending no referrer.
    expect(res.text).toMatch(
      /<img class="logo" src="https:\/\/app\.example\/logo\.png" alt="" width="48" height="48" referrerpolicy="no-referrer">/,
    );
    const csp = String(res.headers['content-security-policy']);
    expect(csp).toContain('img-src https:;');
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("frame-ancestors 'none'");
    // The form's 303 goes to the edge, which sends the browser on to the app (and the app perhaps to a
    // scheme of its own): Chrome would check form-action against each, so the page names none.
    expect(csp).not.toContain('form-action');
    expect((await requestRow(id)).account_id).toBe(await accountId('consent-ada'));
    // Opening it again in the same account is fine.
    expect((await page(agent, id)).status).toBe(200);
  });

  it('Allow: the request is decided with a code hash, the app connected, and a 303 takes the code to the edge', async () => {
    const agent = await signIn('consent-allow');
    const me = await accountId('consent-allow');
    const { id, uid } = await edgeRequest({
      interaction_uid: `uid/with?odd=chars-${randomBytes(4).toString('hex')}`,
    });
    expect((await page(agent, id)).status).toBe(200);
    const res = await answer(agent, id, 'allow');
    expect(res.status, res.text).toBe(303);
    const code = edgeReturn(res.headers.location, uid);
    expect(res.headers.location).toBe(`${EDGE}/mcp/interaction/${encodeURIComponent(uid)}/return?c=${code}`);
    const row = await requestRow(id);
    expect(row).toMatchObject({ account_id: me, decision: 'allow', consumed_at: null });
    expect(row.decided_at).toBeInstanceOf(Date);
    expect(row.decision_code_hash).toBe(sha256Hex(code));
    expect(await delegation(me, 'https://app.example/oauth/client.json')).toMatchObject({
      client_name: 'Example Agent',
      scopes: [SCOPES.registryRead, SCOPES.stmRead],
      grant_id: null,
      revoked_at: null,
    });
    const audit = await database.db
      .selectFrom('account_audit_events')
      .select(['action', 'target'])
      .where('actor_id', '=', me)
      .execute();
    expect(audit).toContainEqual({
      action: 'connected-app.allow',
      target: 'https://app.example/oauth/client.json',
    });
    expect(logged.join('\n')).not.toContain(code);
    expect(logged.join('\n')).not.toContain(id);

    // Decided once: a second answer is the unknown page and changes nothing.
    const again = await answer(agent, id, 'deny');
    expect(again.status).toBe(404);
    expect(again.text).toContain(UNKNOWN);
    expect(await requestRow(id)).toEqual(row);
    expect((await page(agent, id)).status).toBe(404);
  });

  it('Deny: a 303 to the edge as well, the decision deny, and no connected app', async () => {
    const agent = await signIn('consent-deny');
    const me = await accountId('consent-deny');
    const { id, uid } = await edgeRequest({ client_id: 'https://denied.example/client.json' });
    await page(agent, id);
    // As a browser posts the page's form: the page sends no referrer, so its Origin is `null`.
    const res = await agent
      .post(`/api/mcp/consent/${id}`)
      .set('Origin', 'null')
      .set('Sec-Fetch-Site', 'same-origin')
      .type('form')
      .send({ decision: 'deny' });
    expect(res.status, res.text).toBe(303);
    const code = edgeReturn(res.headers.location, uid);
    expect(await requestRow(id)).toMatchObject({ decision: 'deny', decision_code_hash: sha256Hex(code) });
    expect(await delegation(me, 'https://denied.example/client.json')).toBeUndefined();
  });

  it('remembered consent: an app allowed every scope it asks is not asked again, unless a scope is new or it was revoked', async () => {
    const agent = await signIn('consent-again');
    const me = await accountId('consent-again');
    const client = 'https://again.example/client.json';
    const first = await edgeRequest({ client_id: client, scopes: [SCOPES.registryRead, SCOPES.stmRead] });
    await page(agent, first.id);
    expect((await answer(agent, first.id, 'allow')).status).toBe(303);
    // The edge records the grant it made.
    await database.db
      .updateTable('edge_delegations')
      .set({ grant_id: 'grant-1' })
      .where('account_id', '=', me)
      .execute();
    const connected = await delegation(me, client);

    // Fewer scopes than allowed: straight back to the edge, decided allow with its own code.
    const second = await edgeRequest({ client_id: client, scopes: [SCOPES.registryRead] });
    const remembered = await page(agent, second.id);
    expect(remembered.status, remembered.text).toBe(303);
    const code = edgeReturn(remembered.headers.location, second.uid);
    expect(await requestRow(second.id)).toMatchObject({
      account_id: me,
      decision: 'allow',
      decision_code_hash: sha256Hex(code),
    });

    // A scope not allowed before: asked; allowing adds it, keeping the grant and the date.
    const third = await edgeRequest({ client_id: client, scopes: [SCOPES.ltmRead, SCOPES.registryRead] });
    const asked = await page(agent, third.id);
    expect(asked.status).toBe(200);
    expect(asked.text).toContain('value="allow"');
    expect((await answer(agent, third.id, 'allow')).status).toBe(303);
    expect(await delegation(me, client)).toMatchObject({
      scopes: [SCOPES.ltmRead, SCOPES.stmRead, SCOPES.registryRead].sort(),
      grant_id: 'grant-1',
      created_at: connected?.created_at,
      revoked_at: null,
    });

    // Revoked: asked again; allowing starts afresh with just what is asked, and no grant.
    await database.db
      .updateTable('edge_delegations')
      .set({ revoked_at: new Date() })
      .where('account_id', '=', me)
      .execute();
    const fourth = await edgeRequest({ client_id: client, scopes: [SCOPES.registryRead] });
    expect((await page(agent, fourth.id)).status).toBe(200);
    expect((await answer(agent, fourth.id, 'allow')).status).toBe(303);
    const fresh = await delegation(me, client);
    expect(fresh).toMatchObject({ scopes: [SCOPES.registryRead], grant_id: null, revoked_at: null });
    expect(fresh?.created_at.getTime()).toBeGreaterThan(connected?.created_at.getTime() ?? 0);
  });
});

describe('remembered consent never answers for an app on this computer, or another host of the edge', () => {
  it('a loopback or own-scheme redirect, or a tenant host: asked each time, the host named', async () => {
    const agent = await signIn('consent-local');
    const client = 'https://local.example/client.json';
    const first = await edgeRequest({ client_id: client });
    await page(agent, first.id);
    expect((await answer(agent, first.id, 'allow')).status).toBe(303);
    // The same app and scopes on the web: remembered.
    expect((await page(agent, (await edgeRequest({ client_id: client })).id)).status).toBe(303);
    for (const redirect of [
      '127.0.0.1:53123',
      'localhost:9',
      '[::1]:8080',
      'cursor://anysphere.cursor-mcp',
    ]) {
      const asked = await page(agent, (await edgeRequest({ client_id: client, redirect_host: redirect })).id);
      expect({ redirect, status: asked.status }).toEqual({ redirect, status: 200 });
      expect(asked.text).toContain('an app on this computer');
    }
    const tenant = await page(
      agent,
      (await edgeRequest({ client_id: client, resource: 'https://acme.mcp.example/mcp' })).id,
    );
    expect(tenant.status).toBe(200);
    expect(tenant.text).toContain('It will use pkgreg at <strong>https://acme.mcp.example/mcp</strong>');
  });
});

describe('consent: what the page says about the app (all of it the app’s own claim)', () => {
  it('escapes a hostile name; marks a registered app unverified and shows it no logo; loopback is "an app on this computer"', async () => {
    const agent = await signIn('consent-hostile');
    const { id } = await edgeRequest({
      client_id: 'c7d1a7a0-2f43-4a3e-9b51-0d9a3a3f0c11',
      client_kind: 'registered',
      client_name: '<script>alert(1)</script><img src=x onerror=alert(2)>"\'&',
      logo_uri: 'https://evil.example/logo.png',
      redirect_host: '127.0.0.1:53123',
      scopes: [SCOPES.agentsInvoke, 'pkgreg.not-a-scope<b>'],
    });
    const res = await page(agent, id);
    expect(res.status).toBe(200);
    expect(res.text).not.toMatch(/<script>alert|<img src=x|<b>/);
    expect(res.text).toContain(
      'Allow &lt;script&gt;alert(1)&lt;/script&gt;&lt;img src=x onerror=alert(2)&gt;&quot;&#39;&amp; to use',
    );
    expect(res.text).toContain(
      '<strong>Unverified app:</strong> it registered itself and its name is its own claim.',
    );
    expect(res.text).not.toContain('<img');
    expect(String(res.headers['content-security-policy'])).not.toContain('img-src');
    expect(res.text).toContain('Then you go back to an app on this computer (<code>127.0.0.1:53123</code>)');
    expect(res.text).toContain(
      `${SCOPE_DESCRIPTIONS[SCOPES.agentsInvoke]} <code>${SCOPES.agentsInvoke}</code>`,
    );
    // A scope without a description is shown by its name, escaped.
    expect(res.text).toContain('<li><code>pkgreg.not-a-scope&lt;b&gt;</code></li>');
  });

  it('an http logo is never shown; an operator app says so; [::1] and localhost are this computer too', async () => {
    const agent = await signIn('consent-kinds');
    const http = await edgeRequest({
      logo_uri: 'http://app.example/logo.png',
      redirect_host: 'localhost:8080',
    });
    const res = await page(agent, http.id);
    expect(res.text).not.toContain('<img');
    expect(res.text).toContain('an app on this computer (<code>localhost:8080</code>)');
    const operator = await edgeRequest({
      client_id: 'pkgreg-ops',
      client_kind: 'operator',
      client_name: 'Ops Console',
      redirect_host: '[::1]:5000',
    });
    const ops = await page(agent, operator.id);
    expect(ops.text).toContain("Registered by this server's operator.");
    expect(ops.text).not.toContain('<img');
    expect(ops.text).toContain('an app on this computer (<code>[::1]:5000</code>)');
    expect(ops.text).not.toContain('Unverified');
  });
});

describe('consent: refusals', () => {
  it('unknown, malformed, expired, decided and consumed requests: one 404 page, and nothing claimed', async () => {
    const agent = await signIn('consent-refused');
    const expired = await edgeRequest({ expires_at: new Date(Date.now() - 1000) });
    const consumed = await edgeRequest({ consumed_at: new Date() });
    const decided = await edgeRequest({
      account_id: await accountId('consent-refused'),
      decision: 'deny',
      decided_at: new Date(),
    });
    const unknown = randomBytes(32).toString('base64url');
    const pages = [];
    for (const id of [unknown, 'not-an-id', expired.id, consumed.id, decided.id]) {
      const res = await page(agent, id);
      expect({ id, status: res.status }).toEqual({ id, status: 404 });
      expect(res.headers['content-type']).toMatch(/^text\/html/);
      expect(res.headers['x-frame-options']).toBe('DENY');
      expect(res.headers['cache-control']).toBe('no-store');
      pages.push(withoutNonces(res.text));
      const post = await answer(agent, id, 'allow');
      expect({ id, status: post.status }).toEqual({ id, status: 404 });
      pages.push(withoutNonces(post.text));
    }
    expect(new Set(pages).size).toBe(1);
    expect(pages[0]).toContain(UNKNOWN);
    expect(pages[0]).toContain('Start again from your app.');
    expect((await requestRow(expired.id)).account_id).toBeNull();
    expect((await requestRow(consumed.id)).account_id).toBeNull();
  });

  it("another account's request: the same 404 page byte for byte (nonces aside), and it stays theirs", async () => {
    const ada = await signIn('consent-first');
    const bob = await signIn('consent-second');
    const { id } = await edgeRequest();
    expect((await page(ada, id)).status).toBe(200);
    const before = await requestRow(id);
    const theirs = await page(bob, id);
    const missing = await page(bob, randomBytes(32).toString('base64url'));
    expect(theirs.status).toBe(404);
    expect(withoutNonces(theirs.text)).toBe(withoutNonces(missing.text));
    for (const header of ['content-type', 'cache-control', 'x-frame-options', 'referrer-policy']) {
      expect(theirs.headers[header]).toBe(missing.headers[header]);
    }
    expect(withoutNonces(String(theirs.headers['content-security-policy']))).toBe(
      withoutNonces(String(missing.headers['content-security-policy'])),
    );
    const post = await answer(bob, id, 'allow');
    expect(post.status).toBe(404);
    expect(withoutNonces(post.text)).toBe(withoutNonces(missing.text));
    expect(await requestRow(id)).toEqual(before);
  });

  it('a token instead of a session: the page offers no form and claims nothing; the decision is a 403', async () => {
    const agent = await signIn('consent-token');
    const { token } = await createTokenAs(agent, ORIGIN, { permission: 'publish' });
    const { id } = await edgeRequest();
    const res = await request(app).get(`/api/mcp/consent/${id}`).set('Authorization', `Bearer ${token}`);
    expect(res.text).not.toContain('value="allow"');
    expect(res.text).toContain('Sign in to pkgreg');
    // The cookie does not help a request that carries a token too.
    const both = await agent.get(`/api/mcp/consent/${id}`).set('Authorization', `Bearer ${token}`);
    expect(both.text).not.toContain('value="allow"');
    expect((await requestRow(id)).account_id).toBeNull();
    for (const sender of [request(app), agent] as { post(path: string): request.Test }[]) {
      const post = await sender
        .post(`/api/mcp/consent/${id}`)
        .set('Authorization', `Bearer ${token}`)
        .type('form')
        .send({ decision: 'allow' });
      expect(post.status).toBe(403);
    }
    expect(await requestRow(id)).toMatchObject({ account_id: null, decision: null });
  });

  it('no session: the decision is a 401 with a Bearer challenge; nothing is written', async () => {
    const { id } = await edgeRequest();
    const res = await request(app)
      .post(`/api/mcp/consent/${id}`)
      .set('Origin', ORIGIN)
      .type('form')
      .send({ decision: 'allow' });
    expect(res.status).toBe(401);
    expect(res.headers['www-authenticate']).toMatch(/^Bearer /);
    expect(await requestRow(id)).toMatchObject({ account_id: null, decision: null });
  });

  it('a cross-site post (CSRF) is refused and nothing is written', async () => {
    const agent = await signIn('consent-csrf');
    const me = await accountId('consent-csrf');
    const { id } = await edgeRequest({ client_id: 'https://csrf.example/client.json' });
    await page(agent, id);
    const before = await requestRow(id);
    const forged = await answer(agent, id, 'allow', 'https://evil.example');
    expect(forged.status).toBe(403);
    const noOrigin = await agent
      .post(`/api/mcp/consent/${id}`)
      .set('Sec-Fetch-Site', 'cross-site')
      .type('form')
      .send({ decision: 'allow' });
    expect(noOrigin.status).toBe(403);
    // A null Origin (a sandboxed frame, a data: page) is trusted only from this very origin.
    for (const site of ['cross-site', 'same-site', undefined]) {
      const hidden = agent.post(`/api/mcp/consent/${id}`).set('Origin', 'null');
      if (site) hidden.set('Sec-Fetch-Site', site);
      expect({ site, status: (await hidden.type('form').send({ decision: 'allow' })).status }).toEqual({
        site,
        status: 403,
      });
    }
    expect(await requestRow(id)).toEqual(before);
    expect(await delegation(me, 'https://csrf.example/client.json')).toBeUndefined();
  });

  it('a decision other than allow or deny is a 400 and writes nothing', async () => {
    const agent = await signIn('consent-bad');
    const { id } = await edgeRequest();
    await page(agent, id);
    const before = await requestRow(id);
    for (const decision of ['approve', '']) {
      expect((await answer(agent, id, decision)).status).toBe(400);
    }
    expect(
      (await agent.post(`/api/mcp/consent/${id}`).set('Origin', ORIGIN).type('form').send('')).status,
    ).toBe(400);
    expect(await requestRow(id)).toEqual(before);
  });

  it('EDGE_PUBLIC_BASE_URL unset: both routes are 404 and the request is left alone', async () => {
    const agent = await signInAs(appOff, ORIGIN, 'consent-off');
    const { id } = await edgeRequest();
    const res = await agent.get(`/api/mcp/consent/${id}`);
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ error: 'Not found' });
    expect((await request(appOff).get(`/api/mcp/consent/${id}`)).status).toBe(404);
    const post = await agent
      .post(`/api/mcp/consent/${id}`)
      .set('Origin', ORIGIN)
      .type('form')
      .send({ decision: 'allow' });
    expect(post.status).toBe(404);
    expect(await requestRow(id)).toMatchObject({ account_id: null, decision: null });
    expect(
      await delegation(await accountId('consent-off'), 'https://app.example/oauth/client.json'),
    ).toBeUndefined();
  });
});
