import { createHash, randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { registerClient } from '@modelcontextprotocol/sdk/client/auth.js';
import { OAuthMetadataSchema } from '@modelcontextprotocol/sdk/shared/auth.js';
import { SCOPES } from '@pkgreg/contracts';
import { createTestDatabase, type TestDatabase } from '@pkgreg/db/testing';
import express from 'express';
import { exportJWK, generateKeyPair, jwtVerify } from 'jose';
import type Provider from 'oidc-provider';
import type { InteractionResults } from 'oidc-provider';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAuthorizationProvider } from '../src/oauth/provider/authorization-provider.js';
import { type ClientDocuments, serveClientDocuments } from './client-documents.js';

// The edge's authorization code flow as configured (authorization-provider.ts), over HTTP on a server of
// its own, with a stand-in for sign-in and consent that answers at once, so the protocol alone is what
// is tested here: PKCE, the resource and its audience, RFC 9207 `iss`, single-use codes, refresh rotation
// and reuse, metadata documents. Mounted in the edge with the registry's consent: sign-in.test.ts and
// sign-in.e2e.test.ts.

let t: TestDatabase;
let provider: Provider;
let base: string;
let issuer: string;
let publicKey: Awaited<ReturnType<typeof generateKeyPair>>['publicKey'];
const server = express();
let listening: ReturnType<typeof server.listen>;
const REDIRECT = 'http://127.0.0.1:9/callback';
/** What the stand-in answers at the next consent: allow, or deny. */
let decision: 'allow' | 'deny' = 'allow';
/** Accounts the provider may issue tokens to. */
const active = new Set(['acct_1']);

// Clients' metadata documents, served over https as `client.test` (client-documents.ts).
let documents: ClientDocuments;

beforeAll(async () => {
  t = await createTestDatabase();
  documents = await serveClientDocuments();
  const keys = await generateKeyPair('ES256', { extractable: true });
  publicKey = keys.publicKey;
  const jwk = { ...(await exportJWK(keys.privateKey)), kid: 'k1', alg: 'ES256', use: 'sig' };
  server.get('/mcp/interaction/:uid', (req, res, next) => {
    interact(req, res).catch(next);
  });
  server.use('/mcp', (req, res) => provider.callback()(req, res));
  listening = server.listen(0, '127.0.0.1');
  await new Promise((resolve) => listening.once('listening', resolve));
  base = `http://127.0.0.1:${(listening.address() as AddressInfo).port}`;
  issuer = `${base}/mcp`;
  provider = createAuthorizationProvider({
    issuer,
    resource: issuer,
    db: t.db,
    signingKeys: [jwk],
    accessTokenTtlSeconds: 600,
    refreshTokenTtlSeconds: 86_400,
    cookieKeys: [randomBytes(32).toString('hex')],
    interactionPath: (uid) => `/mcp/interaction/${uid}`,
    accountActive: async (id) => active.has(id),
    dynamicClientUnusedDays: 30,
    fetch: documents.fetch as never,
    clients: [{ client_id: 'app', token_endpoint_auth_method: 'none', redirect_uris: [REDIRECT] }],
  });
});

afterAll(async () => {
  await new Promise((resolve) => listening?.close(resolve));
  await documents?.close();
  await t?.destroy();
});

/** The stand-in for the registry's sign-in and consent: acct_1, and `decision`. */
async function interact(req: express.Request, res: express.Response): Promise<void> {
  const details = await provider.interactionDetails(req, res);
  let result: InteractionResults;
  if (details.prompt.name === 'login') result = { login: { accountId: 'acct_1' } };
  else if (decision === 'deny') result = { error: 'access_denied', error_description: 'the person said no' };
  else {
    const grant = new provider.Grant({ accountId: 'acct_1', clientId: String(details.params.client_id) });
    const missing = details.prompt.details as { missingResourceScopes?: Record<string, string[]> };
    for (const [indicator, scopes] of Object.entries(missing.missingResourceScopes ?? {})) {
      grant.addResourceScope(indicator, scopes.join(' '));
    }
    result = { consent: { grantId: await grant.save() } };
  }
  await provider.interactionFinished(req, res, result, { mergeWithLastSubmission: true });
}

const verifier = () => randomBytes(32).toString('base64url');
const challengeOf = (v: string) => createHash('sha256').update(v).digest('base64url');

/**
 * Follows an authorization request through sign-in and consent, a browser's cookies kept, until the
 * provider redirects to the client (the returned URL) or answers itself (its status and body).
 */
async function authorize(params: Record<string, string>): Promise<URL | { status: number; body: string }> {
  const cookies = new Map<string, string>();
  let url = `${issuer}/authorize?${new URLSearchParams(params)}`;
  for (let hop = 0; hop < 10; hop += 1) {
    const res = await fetch(url, {
      redirect: 'manual',
      headers: { cookie: [...cookies].map(([k, v]) => `${k}=${v}`).join('; ') },
    });
    for (const line of res.headers.getSetCookie()) {
      const [pair = ''] = line.split(';');
      const at = pair.indexOf('=');
      cookies.set(pair.slice(0, at), pair.slice(at + 1));
    }
    const location = res.headers.get('location');
    if (res.status < 300 || res.status >= 400 || !location)
      return { status: res.status, body: await res.text() };
    const next = new URL(location, url);
    if (!next.href.startsWith(base)) return next;
    url = next.href;
  }
  throw new Error('too many redirects');
}

function request(
  extra: Record<string, string> = {},
  pkce = verifier(),
): { params: Record<string, string>; verifier: string } {
  return {
    verifier: pkce,
    params: {
      response_type: 'code',
      client_id: 'app',
      redirect_uri: REDIRECT,
      code_challenge: challengeOf(pkce),
      code_challenge_method: 'S256',
      resource: issuer,
      scope: `${SCOPES.systemRead} ${SCOPES.stmRead}`,
      state: 'st-1',
      ...extra,
    },
  };
}

async function token(form: Record<string, string>) {
  const res = await fetch(`${issuer}/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ client_id: 'app', ...form }),
  });
  return { status: res.status, body: (await res.json()) as Record<string, string> };
}

async function codeFor(extra: Record<string, string> = {}): Promise<{ code: string; verifier: string }> {
  const { params, verifier: v } = request(extra);
  const back = await authorize(params);
  if (!(back instanceof URL)) throw new Error(`no redirect: ${back.status} ${back.body}`);
  return { code: back.searchParams.get('code') ?? '', verifier: v };
}

const exchange = (code: string, v: string) =>
  token({
    grant_type: 'authorization_code',
    code,
    redirect_uri: REDIRECT,
    code_verifier: v,
    resource: issuer,
  });

describe('authorization code with PKCE', () => {
  it('redirects back with a code, the state and the issuer (RFC 9207); the token names the resource', async () => {
    const { params, verifier: v } = request();
    const back = await authorize(params);
    expect(back).toBeInstanceOf(URL);
    const url = back as URL;
    expect(url.origin + url.pathname).toBe(REDIRECT);
    expect(url.searchParams.get('state')).toBe('st-1');
    expect(url.searchParams.get('iss')).toBe(issuer);
    const res = await exchange(url.searchParams.get('code') ?? '', v);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ token_type: 'Bearer', scope: `${SCOPES.systemRead} ${SCOPES.stmRead}` });
    expect(res.body.refresh_token).toBeTruthy();
    const { payload, protectedHeader } = await jwtVerify(res.body.access_token ?? '', publicKey, {
      issuer,
      audience: issuer,
    });
    expect(protectedHeader).toMatchObject({ alg: 'ES256', kid: 'k1', typ: 'at+jwt' });
    expect(payload).toMatchObject({
      sub: 'acct_1',
      client_id: 'app',
      scope: `${SCOPES.systemRead} ${SCOPES.stmRead}`,
    });
  });

  it('refuses a wrong verifier, a reused code, another redirect_uri (invalid_grant)', async () => {
    const first = await codeFor();
    expect((await exchange(first.code, verifier())).body.error).toBe('invalid_grant');
    const second = await codeFor();
    expect((await exchange(second.code, second.verifier)).status).toBe(200);
    expect((await exchange(second.code, second.verifier)).body.error).toBe('invalid_grant');
    const third = await codeFor();
    const other = await token({
      grant_type: 'authorization_code',
      code: third.code,
      redirect_uri: 'http://127.0.0.1:9/other',
      code_verifier: third.verifier,
    });
    expect(other.body.error).toBe('invalid_grant');
  });

  it('refuses a request without S256 PKCE, back at the client with the error and the issuer', async () => {
    for (const extra of [{ code_challenge: '' }, { code_challenge_method: 'plain' }]) {
      const { params } = request();
      const back = await authorize(
        Object.fromEntries(Object.entries({ ...params, ...extra }).filter(([, v]) => v)),
      );
      expect(back).toBeInstanceOf(URL);
      expect((back as URL).searchParams.get('error')).toBe('invalid_request');
      expect((back as URL).searchParams.get('iss')).toBe(issuer);
    }
  });

  it('a resource other than the MCP one is invalid_target, an unknown scope invalid_scope', async () => {
    const target = await authorize(request({ resource: 'https://elsewhere.example/mcp' }).params);
    expect((target as URL).searchParams.get('error')).toBe('invalid_target');
    const scope = await authorize(request({ scope: `${SCOPES.systemRead} pkgreg.everything` }).params);
    expect((scope as URL).searchParams.get('error')).toBe('invalid_scope');
  });

  it('a redirect_uri the client did not register is answered here, never redirected to', async () => {
    const back = await authorize(request({ redirect_uri: 'https://attacker.example/cb' }).params);
    expect(back).not.toBeInstanceOf(URL);
    expect((back as { status: number }).status).toBe(400);
  });

  it('a denied consent returns access_denied to the client', async () => {
    decision = 'deny';
    try {
      const back = await authorize(request().params);
      expect((back as URL).searchParams.get('error')).toBe('access_denied');
      expect((back as URL).searchParams.get('iss')).toBe(issuer);
    } finally {
      decision = 'allow';
    }
  });
});

describe('refresh tokens', () => {
  it('rotate on every use; a reused one revokes the whole family', async () => {
    const { code, verifier: v } = await codeFor();
    const first = await exchange(code, v);
    const second = await token({
      grant_type: 'refresh_token',
      refresh_token: first.body.refresh_token ?? '',
    });
    expect(second.status).toBe(200);
    expect(second.body.refresh_token).not.toBe(first.body.refresh_token);
    // The first one again: refused, and the one it was rotated into dies with it.
    expect(
      (await token({ grant_type: 'refresh_token', refresh_token: first.body.refresh_token ?? '' })).body
        .error,
    ).toBe('invalid_grant');
    const third = await token({
      grant_type: 'refresh_token',
      refresh_token: second.body.refresh_token ?? '',
    });
    expect(third.body.error).toBe('invalid_grant');
  });

  it('stop when the account is no longer active', async () => {
    const { code, verifier: v } = await codeFor();
    const first = await exchange(code, v);
    active.delete('acct_1');
    try {
      const refused = await token({
        grant_type: 'refresh_token',
        refresh_token: first.body.refresh_token ?? '',
      });
      expect(refused.body.error).toBe('invalid_grant');
    } finally {
      active.add('acct_1');
    }
  });
});

describe('dynamic client registration (RFC 7591), by the MCP SDK', () => {
  const metadata = async () =>
    OAuthMetadataSchema.parse(await (await fetch(`${issuer}/.well-known/openid-configuration`)).json());

  it('a public client registers, then completes the code flow and refreshes', async () => {
    const registered = await registerClient(issuer, {
      metadata: await metadata(),
      clientMetadata: { client_name: 'Agent', redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none' },
    });
    expect(registered.client_id).toMatch(/^dcr_[0-9a-f]{32}$/);
    expect(registered.client_secret).toBeUndefined();
    // What the server's metadata says, the registration says (ChatGPT refuses one that disagrees).
    expect(registered.grant_types).toEqual(['authorization_code', 'refresh_token']);
    const { params, verifier: v } = request({ client_id: registered.client_id });
    const back = (await authorize(params)) as URL;
    const code = back.searchParams.get('code') ?? '';
    const res = await token({
      client_id: registered.client_id,
      grant_type: 'authorization_code',
      code,
      redirect_uri: REDIRECT,
      code_verifier: v,
    });
    expect(res.status).toBe(200);
    const refreshed = await token({
      client_id: registered.client_id,
      grant_type: 'refresh_token',
      refresh_token: res.body.refresh_token ?? '',
    });
    expect(refreshed.status).toBe(200);
  });

  it('a confidential client gets its secret once; only its hash is kept, and a wrong one is invalid_client', async () => {
    const registered = await registerClient(issuer, {
      metadata: await metadata(),
      clientMetadata: {
        client_name: 'Server agent',
        redirect_uris: [REDIRECT],
        token_endpoint_auth_method: 'client_secret_post',
      },
    });
    const secret = registered.client_secret ?? '';
    expect(secret).toMatch(/^pks_/);
    const rows = await t.db
      .selectFrom('edge_dynamic_clients')
      .select(['secret_hash', 'metadata'])
      .where('client_id', '=', registered.client_id)
      .execute();
    expect(rows[0]?.secret_hash).toMatch(/^scrypt\$/);
    expect(JSON.stringify(rows)).not.toContain(secret);
    const exchangeWith = async (clientSecret: string) => {
      const { params, verifier: v } = request({ client_id: registered.client_id });
      const code = ((await authorize(params)) as URL).searchParams.get('code') ?? '';
      return token({
        client_id: registered.client_id,
        client_secret: clientSecret,
        grant_type: 'authorization_code',
        code,
        redirect_uri: REDIRECT,
        code_verifier: v,
      });
    };
    expect((await exchangeWith('pks_wrong')).body.error).toBe('invalid_client');
    expect((await exchangeWith(secret)).status).toBe(200);
  });

  it('refuses metadata it cannot honour (RFC 7591 invalid_client_metadata / invalid_redirect_uri)', async () => {
    const registeredClients = async () =>
      Number(
        (
          await t.db
            .selectFrom('edge_dynamic_clients')
            .select((eb) => eb.fn.countAll().as('n'))
            .execute()
        )[0]?.n,
      );
    const before = await registeredClients();
    const post = async (body: unknown) => {
      const res = await fetch(`${issuer}/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      return { status: res.status, body: (await res.json()) as Record<string, string> };
    };
    expect((await post({ redirect_uris: ['not a url'] })).body.error).toBe('invalid_redirect_uri');
    expect((await post({ redirect_uris: [REDIRECT], grant_types: ['client_credentials'] })).body.error).toBe(
      'invalid_client_metadata',
    );
    expect((await post({ redirect_uris: [REDIRECT], response_types: ['token'] })).body.error).toBe(
      'invalid_client_metadata',
    );
    expect(await registeredClients()).toBe(before);
  });
});

describe('client ID metadata documents', () => {
  const LOOPBACK = 'http://127.0.0.1/callback';
  const document = (file: string, extra: Record<string, unknown> = {}) => {
    const id = `${documents.origin}/${file}`;
    documents.served.set(`/${file}`, {
      body: {
        client_id: id,
        client_name: 'Desktop agent',
        redirect_uris: [LOOPBACK],
        token_endpoint_auth_method: 'none',
        ...extra,
      },
      headers: { 'cache-control': 'max-age=300' },
    });
    return id;
  };
  const flow = (clientId: string, redirectUri: string) => {
    const { params, verifier: v } = request({ client_id: clientId, redirect_uri: redirectUri });
    return { back: authorize(params), verifier: v };
  };

  it('a client named by its document signs in with a loopback redirect on any port, and is cached', async () => {
    const id = document('desktop.json');
    const redirect = 'http://127.0.0.1:53123/callback';
    const { back, verifier: v } = flow(id, redirect);
    const url = (await back) as URL;
    expect(url).toBeInstanceOf(URL);
    expect(url.origin + url.pathname).toBe('http://127.0.0.1:53123/callback');
    const res = await token({
      client_id: id,
      grant_type: 'authorization_code',
      code: url.searchParams.get('code') ?? '',
      redirect_uri: redirect,
      code_verifier: v,
    });
    expect(res.status).toBe(200);
    // Within its max-age the document is not fetched again.
    const before = documents.fetched.filter((f) => f === '/desktop.json').length;
    expect(await flow(id, 'http://127.0.0.1:40001/callback').back).toBeInstanceOf(URL);
    expect(documents.fetched.filter((f) => f === '/desktop.json').length).toBe(before);
  });

  it('a redirect URI the document does not list is answered here, never followed', async () => {
    const id = document('strict.json');
    for (const redirect of [
      'http://127.0.0.1:53123/other',
      'https://attacker.example/callback',
      'http://127.0.0.2:1/callback',
    ]) {
      const back = await flow(id, redirect).back;
      expect(back, redirect).not.toBeInstanceOf(URL);
      expect((back as { status: number }).status).toBe(400);
    }
  });

  it('refuses a document that names another client, is too large, redirects, or asks for a secret', async () => {
    const other = `${documents.origin}/other.json`;
    documents.served.set('/other.json', {
      body: { client_id: `${documents.origin}/else.json`, redirect_uris: [LOOPBACK] },
    });
    documents.served.set('/large.json', {
      body: {
        client_id: `${documents.origin}/large.json`,
        redirect_uris: [LOOPBACK],
        client_name: 'x'.repeat(6000),
      },
    });
    documents.served.set('/moved.json', {
      body: '',
      status: 302,
      headers: { location: `${documents.origin}/desktop.json` },
    });
    const secret = document('secret.json', { token_endpoint_auth_method: 'client_secret_post' });
    for (const id of [
      other,
      `${documents.origin}/large.json`,
      `${documents.origin}/moved.json`,
      secret,
      `${documents.origin}/missing.json`,
    ]) {
      const back = await flow(id, LOOPBACK).back;
      expect(back, id).not.toBeInstanceOf(URL);
      expect((back as { status: number; body: string }).body, id).toMatch(/invalid_client/);
    }
  });

  it('never fetches a document from an IP literal, localhost or a single-label name', async () => {
    const port = new URL(documents.origin).port;
    const count = documents.fetched.length;
    for (const id of [
      `https://127.0.0.1:${port}/desktop.json`,
      `https://localhost:${port}/desktop.json`,
      `https://intranet:${port}/desktop.json`,
    ]) {
      const back = await flow(id, LOOPBACK).back;
      expect((back as { body: string }).body, id).toMatch(/invalid_client/);
    }
    expect(documents.fetched.length).toBe(count);
  });
});

describe('metadata', () => {
  it('says code + S256, the iss parameter, and no scope beyond the edge own', async () => {
    const res = await fetch(`${issuer}/.well-known/openid-configuration`);
    const meta = (await res.json()) as Record<string, unknown>;
    expect(meta).toMatchObject({
      issuer,
      response_types_supported: ['code'],
      code_challenge_methods_supported: ['S256'],
      authorization_response_iss_parameter_supported: true,
      client_id_metadata_document_supported: true,
    });
    expect(meta.dpop_signing_alg_values_supported).toBeUndefined();
    expect(meta.userinfo_endpoint).toBeUndefined();
    // The provider's own document lists `openid` whatever it is told (the edge serves its own RFC 8414
    // document); asking for it is refused, so no ID token is ever issued.
    const openid = await authorize(request({ scope: `openid ${SCOPES.systemRead}` }).params);
    expect((openid as URL).searchParams.get('error')).toBe('invalid_scope');
  });
});
