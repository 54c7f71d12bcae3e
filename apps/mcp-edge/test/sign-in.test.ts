import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { ALL_SCOPES, deriveDelegatedNamespace, deriveNamespace, SCOPES } from '@pkgreg/contracts';
import { decodeJwt } from 'jose';
import { sql } from 'kysely';
import request from 'supertest';
import { beforeAll, describe, expect, it } from 'vitest';
import { createClient, disableClient } from '../src/oauth/clients.service.js';
import { sweepExpiredSignIns } from '../src/oauth/provider/edge-authorization.js';
import {
  BASE,
  callTool,
  createHarness,
  ISSUER,
  RESOURCE,
  resourceOf,
  rpc,
  useHarness,
  withinOneWindow,
} from './helpers.js';

// The authorization code flow as mounted in the edge (issue 29): authorize → the edge's interaction →
// the hand-off row the registry's consent page decides (played here by the test, as the registry would
// write it; the registry's side has its own tests and the end-to-end test drives both) → the return
// → the code → tokens that work at /mcp. Every refusal on the edge's side of the hand-off too.

const REGISTRY = 'https://registry.test';
const TUNNEL = 'ada.tunnel.example.com';
const h = useHarness({
  REGISTRY_PUBLIC_URL: REGISTRY,
  PKGREG_PUBLIC_MCP_TUNNEL_SESSIONS_JSON: JSON.stringify([
    { host: TUNNEL, sessionId: 'ada-sess', secret: 's'.repeat(40) },
    { handle: 'bob', sessionId: 'bob-sess', secret: 'b'.repeat(40) },
  ]),
});
const REDIRECT = 'http://127.0.0.1:9/callback';
const sha = (text: string) => createHash('sha256').update(text).digest('hex');
let clientId: string;
let accountId: string;

async function newAccount(): Promise<string> {
  const id = randomUUID();
  await sql`insert into auth_user ("id", "name", "email", "emailVerified", "createdAt", "updatedAt")
    values (${id}, 'Ada', ${`${id}@example.com`}, true, now(), now())`.execute(h.t.db);
  return id;
}

beforeAll(async () => {
  const registered = await request(h.app)
    .post('/mcp/register')
    .send({ redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none', client_name: 'Test <b>App</b>' })
    .expect(201);
  clientId = registered.body.client_id;
  accountId = await newAccount();
});

function pkce() {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

/** Starts a sign-in in a browser of its own: the hand-off id, the interaction and the browser. */
async function startSignIn(query: Record<string, string> = {}) {
  const browser = request.agent(h.app);
  const { verifier, challenge } = pkce();
  const state = randomBytes(8).toString('hex');
  const params = new URLSearchParams({
    response_type: 'code',
    client_id: clientId,
    redirect_uri: REDIRECT,
    code_challenge: challenge,
    code_challenge_method: 'S256',
    state,
    resource: RESOURCE,
    scope: `${SCOPES.systemRead} ${SCOPES.stmRead} ${SCOPES.stmWrite}`,
    ...query,
  });
  const authorize = await browser.get(`/mcp/authorize?${params}`).expect(303);
  const interaction = new URL(String(authorize.headers.location), BASE).pathname;
  const uid = interaction.split('/').at(-1) as string;
  expect(interaction).toBe(`/mcp/interaction/${uid}`);
  const handOff = await browser.get(interaction).expect(303);
  const consent = new URL(String(handOff.headers.location));
  expect(consent.origin).toBe(REGISTRY);
  const id = consent.pathname.replace('/api/mcp/consent/', '');
  return { browser, verifier, state, uid, id };
}

/** What the registry writes when the signed-in person decides (its consent page, apps/registry-api). */
async function decide(id: string, decision: 'allow' | 'deny', account = accountId) {
  const code = randomBytes(32).toString('base64url');
  await sql`update edge_consent_requests set account_id = ${account}, decision = ${decision},
    decided_at = now(), decision_code_hash = ${sha(code)} where id_hash = ${sha(id)}`.execute(h.t.db);
  if (decision === 'allow') {
    await sql`insert into edge_delegations (account_id, client_id, client_name, scopes)
      select account_id, client_id, client_name, scopes from edge_consent_requests where id_hash = ${sha(id)}
      on conflict (account_id, client_id) do update set revoked_at = null, scopes = excluded.scopes`.execute(
      h.t.db,
    );
  }
  return code;
}

/** Back from the registry, on to the app's redirect_uri: its query. */
async function finish(
  browser: ReturnType<typeof request.agent>,
  uid: string,
  code: string,
  redirectUri = REDIRECT,
) {
  const back = await browser.get(`/mcp/interaction/${uid}/return?c=${code}`).expect(303);
  const resume = new URL(String(back.headers.location));
  expect(resume.href).toBe(`${BASE}/mcp/authorize/${uid}`);
  const done = await browser.get(resume.pathname).expect(303);
  const redirect = new URL(String(done.headers.location));
  expect(`${redirect.origin}${redirect.pathname}`).toBe(redirectUri);
  return redirect.searchParams;
}

function exchange(code: string, verifier: string) {
  return request(h.app).post('/mcp/token').type('form').send({
    grant_type: 'authorization_code',
    code,
    code_verifier: verifier,
    redirect_uri: REDIRECT,
    client_id: clientId,
    resource: RESOURCE,
  });
}

describe('signing in by URL: authorize, hand-off, consent decision, code, tokens', () => {
  it('hands the sign-in to the registry with what its consent page shows', async () => {
    const { id, uid } = await startSignIn();
    const row = await h.t.db
      .selectFrom('edge_consent_requests')
      .selectAll()
      .where('id_hash', '=', sha(id))
      .executeTakeFirstOrThrow();
    expect(row).toMatchObject({
      interaction_uid: uid,
      client_id: clientId,
      client_kind: 'registered',
      client_name: 'Test <b>App</b>',
      redirect_host: '127.0.0.1:9',
      resource: RESOURCE,
      scopes: [SCOPES.systemRead, SCOPES.stmRead, SCOPES.stmWrite],
      account_id: null,
      decision: null,
    });
    expect(row.expires_at.getTime()).toBeGreaterThan(Date.now());
  });

  it('allowed: the code gives a token for the person with this app, which works at /mcp', async () => {
    const { browser, verifier, state, uid, id } = await startSignIn();
    const code = await decide(id, 'allow');
    const back = await finish(browser, uid, code);
    expect(back.get('state')).toBe(state);
    expect(back.get('iss')).toBe(ISSUER);
    const tokens = await exchange(back.get('code') as string, verifier).expect(200);
    expect(tokens.body).toMatchObject({
      token_type: 'Bearer',
      scope: `${SCOPES.systemRead} ${SCOPES.stmRead} ${SCOPES.stmWrite}`,
    });
    expect(tokens.body.refresh_token).toEqual(expect.any(String));
    const claims = decodeJwt(tokens.body.access_token);
    expect(claims).toMatchObject({ iss: ISSUER, aud: RESOURCE, sub: accountId, client_id: clientId });
    const listed = await rpc(h, tokens.body.access_token, 'tools/list').expect(200);
    expect(listed.body.result.tools.map((t: { name: string }) => t.name)).toContain('pkgreg.system.v1.info');
    // Its memory is the person's with this app: the delegated namespace, and no other.
    const put = (namespace: string) =>
      callTool(h, tokens.body.access_token, 'pkgreg.memory.v1.put', {
        namespace,
        tier: 'stm',
        content: 'hello',
      });
    const mine = await put(deriveDelegatedNamespace(ISSUER, clientId, accountId)).expect(200);
    expect(mine.body.result.entry).toMatchObject({ tier: 'stm', status: 'active' });
    const appOnly = await put(deriveNamespace(ISSUER, clientId)).expect(200);
    expect(appOnly.body.error.data.reason).toBe('namespace_unauthorized');
    // The grant is remembered for the registry's "connected apps".
    const delegation = await h.t.db
      .selectFrom('edge_delegations')
      .select(['grant_id', 'revoked_at'])
      .where('account_id', '=', accountId)
      .where('client_id', '=', clientId)
      .executeTakeFirstOrThrow();
    expect(delegation.grant_id).toEqual(expect.any(String));
    expect(delegation.revoked_at).toBeNull();
  });

  it('refresh tokens rotate; a used one revokes the family and the app at once', async () => {
    const { browser, verifier, uid, id } = await startSignIn();
    const back = await finish(browser, uid, await decide(id, 'allow'));
    const first = (await exchange(back.get('code') as string, verifier).expect(200)).body;
    const refresh = (token: string) =>
      request(h.app)
        .post('/mcp/token')
        .type('form')
        .send({ grant_type: 'refresh_token', refresh_token: token, client_id: clientId });
    const second = (await refresh(first.refresh_token).expect(200)).body;
    expect(second.refresh_token).not.toBe(first.refresh_token);
    await rpc(h, second.access_token, 'tools/list').expect(200);
    const reused = await refresh(first.refresh_token).expect(400);
    expect(reused.body).toMatchObject({ error: 'invalid_grant' });
    // The family is gone, and the access token issued under it is refused from now on.
    expect((await refresh(second.refresh_token).expect(400)).body.error).toBe('invalid_grant');
    await expect
      .poll(async () => (await rpc(h, second.access_token, 'tools/list')).status, { timeout: 5000 })
      .toBe(401);
  });
});

describe('refusals on the way (each leaves the hand-off as it was)', () => {
  it('denied: the app gets access_denied with iss, and no code; no grant, no delegation written', async () => {
    const person = await newAccount();
    const { browser, state, uid, id } = await startSignIn();
    const back = await finish(browser, uid, await decide(id, 'deny', person));
    expect(Object.fromEntries(back)).toMatchObject({ error: 'access_denied', state, iss: ISSUER });
    expect(back.has('code')).toBe(false);
    const written = await sql<{ n: number }>`
      select (select count(*) from edge_oauth_artifacts where account_id = ${person} and model <> 'Interaction')::int
        + (select count(*) from edge_delegations where account_id = ${person})::int as n`.execute(h.t.db);
    expect(written.rows[0]?.n).toBe(0);
  });

  it('a return in another browser, with a wrong code, or a second time: refused, nothing consumed', async () => {
    const { browser, uid, id } = await startSignIn();
    const code = await decide(id, 'allow');
    const consumed = async () =>
      (
        await h.t.db
          .selectFrom('edge_consent_requests')
          .select('consumed_at')
          .where('id_hash', '=', sha(id))
          .executeTakeFirstOrThrow()
      ).consumed_at;
    // Another browser holds neither the interaction's cookie nor the hand-off's.
    const stranger = await request(h.app)
      .get(`/mcp/interaction/${uid}/return?c=${code}`)
      .set('Accept', 'text/html')
      .expect(400);
    expect(stranger.text).toContain('Start again from your app');
    expect(stranger.headers['cache-control']).toBe('no-store');
    await browser
      .get(`/mcp/interaction/${uid}/return?c=${randomBytes(32).toString('base64url')}`)
      .expect(400);
    await browser.get(`/mcp/interaction/${uid}/return`).expect(400);
    expect(await consumed()).toBeNull();
    await finish(browser, uid, code);
    expect(await consumed()).not.toBeNull();
    const again = await browser.get(`/mcp/interaction/${uid}/return?c=${code}`).expect(400);
    expect(again.body).toMatchObject({ error: 'invalid_request' });
  });

  it('an undecided hand-off cannot be returned from', async () => {
    const { browser, uid } = await startSignIn();
    await browser
      .get(`/mcp/interaction/${uid}/return?c=${randomBytes(32).toString('base64url')}`)
      .expect(400);
  });

  it('a suspended account: access_denied, however the registry decided', async () => {
    const suspended = await newAccount();
    await sql`update auth_user set banned = true where id = ${suspended}`.execute(h.t.db);
    const { browser, uid, id } = await startSignIn();
    const back = await finish(browser, uid, await decide(id, 'allow', suspended));
    expect(back.get('error')).toBe('access_denied');
  });

  it('a wrong PKCE verifier or a reused code: invalid_grant', async () => {
    const { browser, verifier, uid, id } = await startSignIn();
    const back = await finish(browser, uid, await decide(id, 'allow'));
    const code = back.get('code') as string;
    expect((await exchange(code, pkce().verifier).expect(400)).body.error).toBe('invalid_grant');
    // A wrong verifier does not spend the code (the provider checks it first); the right one works once.
    await exchange(code, verifier).expect(200);
    expect((await exchange(code, verifier).expect(400)).body.error).toBe('invalid_grant');
  });

  it('without PKCE, with a foreign resource, an unknown scope or an unlisted redirect: refused', async () => {
    const browser = request.agent(h.app);
    const base: Record<string, string> = {
      response_type: 'code',
      client_id: clientId,
      redirect_uri: REDIRECT,
      state: 's',
      code_challenge: pkce().challenge,
      code_challenge_method: 'S256',
    };
    const refusal = async (params: Record<string, string>) => {
      const res = await browser.get(`/mcp/authorize?${new URLSearchParams(params)}`).expect(303);
      return Object.fromEntries(new URL(String(res.headers.location)).searchParams);
    };
    const { code_challenge: _c, code_challenge_method: _m, ...noPkce } = base;
    expect(await refusal(noPkce)).toMatchObject({ error: 'invalid_request', iss: ISSUER });
    expect(await refusal({ ...base, code_challenge_method: 'plain' })).toMatchObject({
      error: 'invalid_request',
    });
    expect(await refusal({ ...base, resource: 'https://elsewhere.example/mcp' })).toMatchObject({
      error: 'invalid_target',
    });
    expect(await refusal({ ...base, scope: 'pkgreg.everything' })).toMatchObject({ error: 'invalid_scope' });
    // Never redirected to an address the client did not register: an error page instead.
    const unlisted = await browser
      .get(`/mcp/authorize?${new URLSearchParams({ ...base, redirect_uri: 'https://evil.example/cb' })}`)
      .set('Accept', 'application/json')
      .expect(400);
    expect(unlisted.headers.location).toBeUndefined();
    expect(unlisted.body.error).toBe('invalid_redirect_uri');
  });

  it("a served tenant's or tunnel's resource: the sign-in and the token are for it", async () => {
    const resource = resourceOf(TUNNEL);
    const { browser, verifier, uid, id } = await startSignIn({ resource });
    const row = await h.t.db
      .selectFrom('edge_consent_requests')
      .select('resource')
      .where('id_hash', '=', sha(id))
      .executeTakeFirstOrThrow();
    expect(row.resource).toBe(resource);
    const back = await finish(browser, uid, await decide(id, 'allow'));
    const tokens = await request(h.app)
      .post('/mcp/token')
      .type('form')
      .send({
        grant_type: 'authorization_code',
        code: back.get('code'),
        code_verifier: verifier,
        redirect_uri: REDIRECT,
        client_id: clientId,
        resource,
      })
      .expect(200);
    expect(decodeJwt(tokens.body.access_token).aud).toBe(resource);
  });

  it("a handle's resource only under the base host: never one under a domain an attacker chose", async () => {
    const browser = request.agent(h.app);
    const params = (resource: string) =>
      new URLSearchParams({
        response_type: 'code',
        client_id: clientId,
        redirect_uri: REDIRECT,
        code_challenge: pkce().challenge,
        code_challenge_method: 'S256',
        state: 's',
        resource,
      });
    // Admission resolves bob's handle under any domain; the sign-in issues no token for such a host.
    const phished = await browser
      .get(`/mcp/authorize?${params(resourceOf('bob.attacker.example'))}`)
      .expect(303);
    expect(new URL(String(phished.headers.location)).searchParams.get('error')).toBe('invalid_target');
    const served = await browser.get(`/mcp/authorize?${params(resourceOf('bob.localhost'))}`).expect(303);
    expect(String(served.headers.location)).toMatch(/^\/mcp\/interaction\//);
  });

  it('allowing an app again does not bring back its tokens from before the revocation', async () => {
    const person = await newAccount();
    const { browser, verifier, uid, id } = await startSignIn();
    const back = await finish(browser, uid, await decide(id, 'allow', person));
    const before = (await exchange(back.get('code') as string, verifier).expect(200)).body;
    await rpc(h, before.access_token, 'tools/list').expect(200);
    // Revoked (connected apps), then allowed again through a new sign-in. Tokens carry whole seconds:
    // one issued in the second of the revocation counts as before it, so the new one comes a second on.
    await sql`update edge_delegations set revoked_at = now(), tokens_not_before = now()
      where account_id = ${person} and client_id = ${clientId}`.execute(h.t.db);
    await new Promise((resolve) => setTimeout(resolve, 1000 - (Date.now() % 1000) + 5));
    const again = await startSignIn();
    const next = await finish(again.browser, again.uid, await decide(again.id, 'allow', person));
    const after = (await exchange(next.get('code') as string, again.verifier).expect(200)).body;
    await expect
      .poll(async () => (await rpc(h, after.access_token, 'tools/list')).status, { timeout: 5000 })
      .toBe(200);
    expect((await rpc(h, before.access_token, 'tools/list')).status).toBe(401);
  });

  it('two requests with one refresh token at once: one wins, and the app is disconnected all the same', async () => {
    const { browser, verifier, uid, id } = await startSignIn();
    const back = await finish(browser, uid, await decide(id, 'allow'));
    const first = (await exchange(back.get('code') as string, verifier).expect(200)).body;
    const refresh = () =>
      request(h.app)
        .post('/mcp/token')
        .type('form')
        .send({ grant_type: 'refresh_token', refresh_token: first.refresh_token, client_id: clientId });
    const answers = await Promise.all([refresh(), refresh()]);
    expect(answers.map((a) => a.status).sort()).toEqual([200, 400]);
    const winner = answers.find((a) => a.status === 200)?.body;
    await expect
      .poll(async () => (await rpc(h, winner.access_token, 'tools/list')).status, { timeout: 5000 })
      .toBe(401);
  });

  it('a client asking for no scope asks for all of them', async () => {
    const { id } = await startSignIn({ scope: '' });
    const row = await h.t.db
      .selectFrom('edge_consent_requests')
      .select('scopes')
      .where('id_hash', '=', sha(id))
      .executeTakeFirstOrThrow();
    expect(row.scopes).toEqual([...ALL_SCOPES]);
  });
});

describe("an operator's client (pnpm edge clients:create --redirect-uri): the code flow with its secret", () => {
  it('signs people in within its allowed scopes, authenticating with HTTP Basic', async () => {
    const operator = await createClient(h.t.db, {
      name: 'Team Cursor',
      scopes: [SCOPES.systemRead, SCOPES.stmRead],
      redirectUris: ['cursor://anysphere.cursor-mcp/oauth/callback', 'http://127.0.0.1/callback'],
    });
    // A loopback redirect on the port the app listens on (RFC 8252); no scope asked: all it may have.
    const redirectUri = 'http://127.0.0.1:5123/callback';
    const { browser, verifier, uid, id } = await startSignIn({
      client_id: operator.clientId,
      redirect_uri: redirectUri,
      scope: '',
    });
    const row = await h.t.db
      .selectFrom('edge_consent_requests')
      .select(['client_kind', 'client_name', 'scopes'])
      .where('id_hash', '=', sha(id))
      .executeTakeFirstOrThrow();
    expect(row).toEqual({
      client_kind: 'operator',
      client_name: 'Team Cursor',
      scopes: [SCOPES.systemRead, SCOPES.stmRead],
    });
    const code = await decide(id, 'allow');
    const back = await finish(browser, uid, code, redirectUri);
    const form = {
      grant_type: 'authorization_code',
      code: back.get('code') as string,
      code_verifier: verifier,
      redirect_uri: redirectUri,
      resource: RESOURCE,
    };
    const anonymous = await request(h.app)
      .post('/mcp/token')
      .type('form')
      .send({ ...form, client_id: operator.clientId })
      .expect(401);
    expect(anonymous.body.error).toBe('invalid_client');
    expect(anonymous.headers['www-authenticate']).toMatch(/^Basic/);
    const tokens = await request(h.app)
      .post('/mcp/token')
      .auth(operator.clientId, operator.clientSecret)
      .type('form')
      .send(form)
      .expect(200);
    expect(tokens.body.scope).toBe(`${SCOPES.systemRead} ${SCOPES.stmRead}`);
    expect(decodeJwt(tokens.body.access_token)).toMatchObject({
      sub: accountId,
      client_id: operator.clientId,
    });
  });

  it('a disabled client, or one registered without redirect URIs, signs no one in', async () => {
    const machine = await createClient(h.t.db, { name: 'CI', scopes: [SCOPES.systemRead] });
    const disabled = await createClient(h.t.db, {
      name: 'Old',
      scopes: [SCOPES.systemRead],
      redirectUris: [REDIRECT],
    });
    await disableClient(h.t.db, disabled.clientId);
    for (const id of [machine.clientId, disabled.clientId]) {
      const res = await request(h.app)
        .get(
          `/mcp/authorize?${new URLSearchParams({
            response_type: 'code',
            client_id: id,
            redirect_uri: REDIRECT,
            code_challenge: pkce().challenge,
            code_challenge_method: 'S256',
          })}`,
        )
        .set('Accept', 'application/json')
        .expect(400);
      expect(res.headers.location).toBeUndefined();
      expect(res.body.error).toBe('invalid_client');
    }
  });

  it("a registration's scope must name this server's scopes (the MCP SDK sends them)", async () => {
    const ok = await request(h.app)
      .post('/mcp/register')
      .send({ redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none', scope: SCOPES.systemRead })
      .expect(201);
    expect(ok.body).toMatchObject({
      scope: SCOPES.systemRead,
      grant_types: ['authorization_code', 'refresh_token'],
    });
    const bad = await request(h.app)
      .post('/mcp/register')
      .send({
        redirect_uris: [REDIRECT],
        token_endpoint_auth_method: 'none',
        scope: 'openid pkgreg.everything',
      })
      .expect(400);
    expect(bad.body.error).toBe('invalid_client_metadata');
  });

  it('no registration names its own allowed scopes', async () => {
    const res = await request(h.app)
      .post('/mcp/register')
      .send({ redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none', pkgreg_allowed_scopes: [] })
      .expect(400);
    expect(res.body.error).toBe('invalid_client_metadata');
  });
});

describe('sign-ins are bounded', () => {
  it('authorize and the hand-off are rate limited per address (429 with Retry-After)', async () => {
    const limited = await createHarness({ EDGE_AUTHORIZE_REQUESTS_PER_MINUTE: '2' });
    try {
      await withinOneWindow();
      const statuses: number[] = [];
      for (let i = 0; i < 3; i += 1) statuses.push((await request(limited.app).get('/mcp/authorize')).status);
      expect(statuses.slice(0, 2).every((s) => s !== 429)).toBe(true);
      const refused = await request(limited.app).get('/mcp/authorize');
      expect(refused.status).toBe(429);
      expect(refused.headers['retry-after']).toMatch(/^\d+$/);
    } finally {
      await limited.close();
    }
  });

  it('expired interactions, codes, hand-offs and unused registrations are swept', async () => {
    const past = new Date(Date.now() - 60_000);
    const future = new Date(Date.now() + 600_000);
    for (const [hash, expires] of [
      ['old', past],
      ['new', future],
    ] as const) {
      await h.t.db
        .insertInto('edge_oauth_artifacts')
        .values({ model: 'Interaction', id_hash: `sweep-${hash}`, payload: '{}', expires_at: expires })
        .execute();
      await h.t.db
        .insertInto('edge_consent_requests')
        .values({
          id_hash: `sweep-${hash}`,
          interaction_uid: `sweep-${hash}`,
          client_id: 'x',
          client_kind: 'registered',
          redirect_host: 'x',
          resource: RESOURCE,
          scopes: [],
          binding_hash: 'x',
          expires_at: expires,
        })
        .execute();
    }
    await sweepExpiredSignIns(h.t.db);
    const left = async (table: 'edge_oauth_artifacts' | 'edge_consent_requests') =>
      (await h.t.db.selectFrom(table).select('id_hash').where('id_hash', 'like', 'sweep-%').execute()).map(
        (r) => r.id_hash,
      );
    expect(await left('edge_oauth_artifacts')).toEqual(['sweep-new']);
    expect(await left('edge_consent_requests')).toEqual(['sweep-new']);
  });
});
