import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ALL_SCOPES, deriveNamespace, SCOPES } from '@pkgreg/contracts';
import { createLogger } from '@pkgreg/server-kit';
import { decodeJwt, decodeProtectedHeader, SignJWT } from 'jose';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEdge } from '../src/app.js';
import { loadEnv } from '../src/env.js';
import { createClient, disableClient } from '../src/oauth/clients.service.js';
import { rotateSigningKey } from '../src/oauth/signing-keys.service.js';
import {
  BASE,
  callTool,
  clientWithToken,
  createHarness,
  expectRpcError,
  ISSUER,
  RESOURCE,
  rpc,
  unknownKey,
  useHarness,
} from './helpers.js';

const h = useHarness();
let client: { clientId: string; clientSecret: string };
beforeAll(async () => {
  client = await createClient(h.t.db, {
    name: 'oauth-test',
    scopes: [SCOPES.systemRead, SCOPES.stmRead, SCOPES.stmWrite],
  });
});

const token = (form: Record<string, string | string[]>, basic = true) => {
  const req = request(h.app).post('/mcp/token').type('form');
  if (basic) req.auth(client.clientId, client.clientSecret);
  return req.send(form);
};

describe('discovery documents (decisions.md: MCP edge / built-in authorization server)', () => {
  it('serves RFC 9728 protected resource metadata at the path-aware and root locations', async () => {
    for (const path of [
      '/.well-known/oauth-protected-resource/mcp',
      '/.well-known/oauth-protected-resource',
    ]) {
      const res = await request(h.app).get(path).expect(200);
      expect(res.body).toMatchObject({
        resource: RESOURCE,
        authorization_servers: [ISSUER],
        bearer_methods_supported: ['header'],
      });
      expect(res.body.scopes_supported).toContain(SCOPES.systemRead);
    }
  });

  it('serves RFC 8414 metadata whose issuer is {base}/mcp', async () => {
    for (const path of [
      '/.well-known/oauth-authorization-server/mcp',
      '/.well-known/oauth-authorization-server',
    ]) {
      const res = await request(h.app).get(path).expect(200);
      expect(res.body).toEqual({
        issuer: ISSUER,
        authorization_endpoint: `${BASE}/mcp/authorize`,
        token_endpoint: `${BASE}/mcp/token`,
        registration_endpoint: `${BASE}/mcp/register`,
        revocation_endpoint: `${BASE}/mcp/revoke`,
        jwks_uri: `${BASE}/mcp/jwks.json`,
        scopes_supported: ALL_SCOPES,
        response_types_supported: ['code'],
        response_modes_supported: ['form_post', 'fragment', 'query'],
        grant_types_supported: ['authorization_code', 'refresh_token', 'client_credentials'],
        code_challenge_methods_supported: ['S256'],
        token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
        client_id_metadata_document_supported: true,
        authorization_response_iss_parameter_supported: true,
      });
    }
  });

  it('says what its authorization server does: each member as the provider (oidc-provider) says it', async () => {
    const ours = (await request(h.app).get('/.well-known/oauth-authorization-server/mcp').expect(200)).body;
    // The provider's own (OpenID) document, as it would answer for the public base.
    const provider = await h.edge.authorization.provider();
    const theirs = (
      await request(provider.callback())
        .get('/.well-known/openid-configuration')
        .set('x-forwarded-host', new URL(BASE).host)
        .set('x-forwarded-proto', 'http')
        .expect(200)
    ).body;
    for (const [member, value] of Object.entries(ours)) {
      // Ours lists the resource's scopes and the client_credentials grant the edge issues itself.
      if (member === 'scopes_supported') continue;
      const expected =
        member === 'grant_types_supported'
          ? (value as string[]).filter((grant) => grant !== 'client_credentials')
          : member !== 'issuer' && typeof value === 'string' && value.startsWith(`${ISSUER}/`)
            ? // Asked at its own root, the provider names its endpoints without the /mcp mount.
              value.replace(ISSUER, BASE)
            : value;
      const sorted = (v: unknown) => (Array.isArray(v) ? [...v].sort() : v);
      expect({ member, value: sorted(theirs[member]) }).toEqual({ member, value: sorted(expected) });
    }
  });

  it('publishes the signing key in the JWKS without its private part', async () => {
    const res = await request(h.app).get('/mcp/jwks.json').expect(200);
    expect(res.body.keys.length).toBeGreaterThanOrEqual(1);
    for (const k of res.body.keys) {
      expect(k).toMatchObject({ kty: 'EC', crv: 'P-256', alg: 'ES256', use: 'sig' });
      expect(k.kid).toBeTruthy();
      expect(k.d).toBeUndefined();
    }
  });
});

describe('token endpoint: client_credentials (decisions.md; RFC 6749 §4.4, RFC 8707)', () => {
  it('issues a signed ES256 JWT with kid, iss, aud, sub, client_id, scope, exp, iat and jti (client_secret_basic)', async () => {
    const res = await token({ grant_type: 'client_credentials', resource: RESOURCE }).expect(200);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.body).toMatchObject({ token_type: 'Bearer', expires_in: 600 });
    const header = decodeProtectedHeader(res.body.access_token);
    const jwks = await request(h.app).get('/mcp/jwks.json');
    expect(header.alg).toBe('ES256');
    expect(jwks.body.keys.map((k: { kid: string }) => k.kid)).toContain(header.kid);
    const claims = decodeJwt(res.body.access_token);
    expect(claims).toMatchObject({
      iss: ISSUER,
      aud: RESOURCE,
      sub: client.clientId,
      client_id: client.clientId,
    });
    expect((claims.exp as number) - (claims.iat as number)).toBe(600);
    expect(claims.jti).toMatch(/^[0-9a-f-]{36}$/);
    // No scope requested: everything the client may have.
    expect(String(claims.scope).split(' ').sort()).toEqual(
      [SCOPES.systemRead, SCOPES.stmRead, SCOPES.stmWrite].sort(),
    );
  });

  it('accepts client_secret_post', async () => {
    const res = await token(
      { grant_type: 'client_credentials', client_id: client.clientId, client_secret: client.clientSecret },
      false,
    ).expect(200);
    expect(res.body.access_token).toBeTruthy();
  });

  it('narrows scope to requested ∩ allowed', async () => {
    const res = await token({
      grant_type: 'client_credentials',
      scope: `${SCOPES.systemRead} ${SCOPES.agentsInvoke}`,
    }).expect(200);
    expect(res.body.scope).toBe(SCOPES.systemRead);
    expect(decodeJwt(res.body.access_token).scope).toBe(SCOPES.systemRead);
  });

  it('answers invalid_scope 400 when no requested scope is allowed, or one is unknown', async () => {
    const none = await token({ grant_type: 'client_credentials', scope: SCOPES.agentsInvoke }).expect(400);
    expect(none.body.error).toBe('invalid_scope');
    const unknown = await token({ grant_type: 'client_credentials', scope: 'admin' }).expect(400);
    expect(unknown.body.error).toBe('invalid_scope');
  });

  it('answers invalid_client 401 with WWW-Authenticate Basic for a wrong secret, an unknown or a disabled client', async () => {
    const wrong = await request(h.app)
      .post('/mcp/token')
      .type('form')
      .auth(client.clientId, 'not-the-secret')
      .send({ grant_type: 'client_credentials' })
      .expect(401);
    expect(wrong.body.error).toBe('invalid_client');
    expect(wrong.headers['www-authenticate']).toMatch(/^Basic/);
    const unknown = await request(h.app)
      .post('/mcp/token')
      .type('form')
      .auth('pkc_nobody', 'x')
      .send({ grant_type: 'client_credentials' })
      .expect(401);
    expect(unknown.body.error).toBe('invalid_client');
    const missing = await token({ grant_type: 'client_credentials' }, false).expect(401);
    expect(missing.body.error).toBe('invalid_client');

    const doomed = await createClient(h.t.db, { name: 'doomed', scopes: [SCOPES.systemRead] });
    await disableClient(h.t.db, doomed.clientId);
    const disabled = await request(h.app)
      .post('/mcp/token')
      .type('form')
      .auth(doomed.clientId, doomed.clientSecret)
      .send({ grant_type: 'client_credentials' })
      .expect(401);
    expect(disabled.body.error).toBe('invalid_client');

    // A client id Postgres cannot hold (U+0000) names no client: invalid_client, not a 500.
    const nulBasic = await request(h.app)
      .post('/mcp/token')
      .type('form')
      .auth(`${client.clientId}\u0000`, client.clientSecret)
      .send({ grant_type: 'client_credentials' })
      .expect(401);
    expect(nulBasic.body.error).toBe('invalid_client');
    const nulPost = await request(h.app)
      .post('/mcp/token')
      .type('form')
      .send({ grant_type: 'client_credentials', client_id: 'pkc_\u0000', client_secret: 'x' })
      .expect(401);
    expect(nulPost.body.error).toBe('invalid_client');
  });

  it('answers unsupported_grant_type for other grants and invalid_request for a missing grant or a JSON body', async () => {
    expect((await token({ grant_type: 'password' }).expect(400)).body.error).toBe('unsupported_grant_type');
    expect((await token({}).expect(400)).body.error).toBe('invalid_request');
    const json = await request(h.app)
      .post('/mcp/token')
      .auth(client.clientId, client.clientSecret)
      .send({ grant_type: 'client_credentials' })
      .expect(400);
    expect(json.body.error).toBe('invalid_request');
  });

  it('answers a 4xx invalid_request, not a 5xx, for an oversized or unreadable form body', async () => {
    const res = await request(h.app)
      .post('/mcp/token')
      .type('form')
      .auth(client.clientId, client.clientSecret)
      .send(`grant_type=client_credentials&pad=${'x'.repeat(20_000)}`);
    expect(res.status).toBe(413);
    expect(res.body.error).toBe('invalid_request');
  });

  it('answers invalid_target when resource names anything but the MCP resource (RFC 8707)', async () => {
    const res = await token({
      grant_type: 'client_credentials',
      resource: 'https://evil.example/mcp',
    }).expect(400);
    expect(res.body.error).toBe('invalid_target');
    const two = await token({
      grant_type: 'client_credentials',
      resource: [RESOURCE, `${BASE}/other`],
    }).expect(400);
    expect(two.body.error).toBe('invalid_target');
  });

  it('limits token requests per client address (failed ones count): 429 + Retry-After', async () => {
    const limited = await createHarness({ EDGE_TOKEN_REQUESTS_PER_MINUTE: '3' });
    try {
      const guess = () =>
        request(limited.app)
          .post('/mcp/token')
          .type('form')
          .auth('pkc_victim', 'guess')
          .send({ grant_type: 'client_credentials' });
      for (let i = 0; i < 3; i++) expect((await guess()).status).toBe(401);
      const res = await guess();
      expect(res.status).toBe(429);
      expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
    } finally {
      await limited.close();
    }
  });

  it('stores the client secret hashed with scrypt, never in clear', async () => {
    const row = await h.t.db
      .selectFrom('oauth_clients')
      .selectAll()
      .where('client_id', '=', client.clientId)
      .executeTakeFirstOrThrow();
    expect(row.client_secret_hash).toMatch(/^scrypt\$/);
    expect(row.client_secret_hash).not.toContain(client.clientSecret);
  });
});

describe('tokens at /mcp (decisions.md: namespace derivation, key rotation)', () => {
  it('derives the namespace app: + sha256(<issuer>|<client_id>)', async () => {
    const c = await clientWithToken(h, [SCOPES.stmWrite]);
    const expected = deriveNamespace(ISSUER, c.clientId);
    expect(expected).toMatch(/^app:[0-9a-f]{64}$/);
    const ok = await callTool(h, c.token, 'pkgreg.memory.v1.put', {
      namespace: expected,
      tier: 'stm',
      content: 'x',
    });
    expect(ok.body.result.entry.namespace).toBe(expected);
  });

  it('rotation: the new key signs, tokens of the old key keep working until they expire', async () => {
    const before = await clientWithToken(h, [SCOPES.systemRead]);
    const oldKid = decodeProtectedHeader(before.token).kid;
    const newKid = await rotateSigningKey(h.t.db, h.env.EDGE_TOKEN_TTL_SECONDS);
    await h.edge.keyStore.reload();
    const after = await clientWithToken(h, [SCOPES.systemRead]);
    expect(decodeProtectedHeader(after.token).kid).toBe(newKid);
    expect(newKid).not.toBe(oldKid);
    const jwks = await request(h.app).get('/mcp/jwks.json');
    expect(jwks.body.keys.map((k: { kid: string }) => k.kid)).toEqual(
      expect.arrayContaining([oldKid, newKid]),
    );
    const states = await h.t.db.selectFrom('oauth_signing_keys').select(['kid', 'status']).execute();
    expect(states.find((s) => s.kid === oldKid)?.status).toBe('retiring');
    // A fresh edge (no cached verification) still accepts the pre-rotation token.
    const fresh = createEdge({ db: h.t.db, redis: h.redis, logger: createLogger('t', 'silent'), env: h.env });
    const res = await rpc(fresh, before.token, 'ping');
    expect(res.status).toBe(200);
    await fresh.shutdown();
  });

  it('a retiring key leaves the JWKS once its tokens have expired', async () => {
    await h.t.db
      .updateTable('oauth_signing_keys')
      .set({ retired_at: new Date(Date.now() - 1000) })
      .where('status', '=', 'retiring')
      .execute();
    await h.edge.keyStore.reload();
    const jwks = await request(h.app).get('/mcp/jwks.json');
    const active = await h.t.db
      .selectFrom('oauth_signing_keys')
      .select('kid')
      .where('status', '=', 'active')
      .execute();
    expect(jwks.body.keys.map((k: { kid: string }) => k.kid)).toEqual(active.map((a) => a.kid));
  });
});

describe('trusted external issuers (validated the same way, JWKS fetched from the issuer)', () => {
  let jwksServer: Server;
  let issuerUrl: string;
  let signer: Awaited<ReturnType<typeof unknownKey>>;
  beforeAll(async () => {
    signer = await unknownKey();
    jwksServer = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ keys: [signer.publicJwk] }));
    });
    await new Promise<void>((r) => jwksServer.listen(0, '127.0.0.1', r));
    issuerUrl = `http://127.0.0.1:${(jwksServer.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((r) => jwksServer.close(() => r())));

  it('accepts a token of a configured issuer and derives the namespace from that issuer', async () => {
    const env = loadEnv({
      ...Object.fromEntries(
        Object.entries(h.env).map(([k, v]) => [k, typeof v === 'string' ? v : undefined]),
      ),
      PKGREG_PUBLIC_BASE_URL: BASE,
      DATABASE_URL: h.t.url,
      EDGE_TRUSTED_ISSUERS_JSON: JSON.stringify([{ issuer: issuerUrl, jwksUrl: `${issuerUrl}/jwks` }]),
    });
    const edge = createEdge({ db: h.t.db, redis: h.redis, logger: createLogger('t', 'silent'), env });
    const now = Math.floor(Date.now() / 1000);
    const sign = (iss: string) =>
      new SignJWT({ scope: SCOPES.systemRead })
        .setProtectedHeader({ alg: 'ES256', kid: signer.kid })
        .setIssuer(iss)
        .setAudience(RESOURCE)
        .setSubject('external-agent')
        .setIssuedAt(now)
        .setExpirationTime(now + 60)
        .sign(signer.key);
    const send = (t: string) => callTool(edge, t, 'pkgreg.system.v1.info');
    const ok = await send(await sign(issuerUrl));
    expect(ok.status).toBe(200);
    expect(ok.body.result.server.backendMode).toBe('development');
    // The same key claiming to be the built-in issuer is refused: keys are bound to their issuer.
    expectRpcError(await send(await sign(ISSUER)), 401, 'token_invalid');
    await edge.shutdown();
    // Not configured on the default edge.
    expectRpcError(await rpc(h, await sign(issuerUrl), 'ping'), 401, 'token_invalid');
  });
});
