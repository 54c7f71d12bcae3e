import { randomUUID } from 'node:crypto';
import type { RequestListener } from 'node:http';
import {
  insertAccounts,
  insertDelegation,
  insertOrganisation,
  TEST_REDIS_URL,
  testKeyPrefix,
} from '@pkgreg/db/testing';
import { useTestDatabase } from '@pkgreg/db/vitest';
import { Redis } from 'ioredis';
import { type CryptoKey, exportJWK, generateKeyPair, SignJWT } from 'jose';
import { sql } from 'kysely';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DELEGATION_REFUSED } from '../src/accounts/delegation-assertion.js';
import { createApp } from '../src/app.js';
import { loadEnv } from '../src/env.js';
import { insertPackages, packageRow, silentLogger } from './fixtures.js';

// docs/accounts.md, "Reading through the MCP edge": the edge reads as a person for an app the person
// allowed by sending a delegation assertion it signs (never the app's own token). The edge's half is
// played here: its delegation keys are rows of edge_delegation_keys, as `ensureActiveKey(db, 'delegation')`
// writes them, and the assertions are signed the way the edge signs them. Every refusal must be the same 401.

const PUBLIC_URL = 'http://registry.test';
const EDGE = 'https://edge.test';
const ISSUER = `${EDGE}/mcp`;
const APP = 'https://agent.example/oauth/client.json';
const TYP = 'pkgreg-delegation+jwt';
const database = useTestDatabase();
let redis: Redis;
let app: RequestListener;
/** The same registry without EDGE_PUBLIC_BASE_URL: no assertion counts. */
let appWithoutEdge: RequestListener;

interface Signer {
  kid: string;
  key: CryptoKey;
}
let active: Signer;
let retiring: Signer;
let retired: Signer;
/** Never in the table. */
let stranger: Signer;
/** The edge's active key for access tokens (oauth_signing_keys): it signs no assertion that counts. */
let accessKey: Signer;

async function newSigner(
  status?: 'active' | 'retiring' | 'retired',
  retiredAt?: Date,
  table: 'edge_delegation_keys' | 'oauth_signing_keys' = 'edge_delegation_keys',
): Promise<Signer> {
  const { publicKey, privateKey } = await generateKeyPair('ES256', { extractable: true });
  const kid = randomUUID();
  if (status) {
    await database.db
      .insertInto(table)
      .values({
        kid,
        alg: 'ES256',
        public_jwk: JSON.stringify({ ...(await exportJWK(publicKey)), kid, alg: 'ES256', use: 'sig' }),
        private_jwk: JSON.stringify({ ...(await exportJWK(privateKey)), kid, alg: 'ES256' }),
        status,
        created_at: new Date(),
        retired_at: retiredAt ?? null,
      })
      .execute();
  }
  return { kid, key: privateKey };
}

interface AssertionOptions {
  signer?: Signer;
  /** The header's kid when it differs from the signer's. */
  kid?: string;
  typ?: string;
  iss?: string;
  aud?: string;
  sub?: string;
  clientId?: string;
  /** Seconds from now. */
  iat?: number;
  exp?: number;
}

/** An assertion as the edge signs it: valid unless an option says otherwise. */
async function assertion(o: AssertionOptions = {}): Promise<string> {
  const signer = o.signer ?? active;
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ client_id: o.clientId ?? APP })
    .setProtectedHeader({ alg: 'ES256', kid: o.kid ?? signer.kid, typ: o.typ ?? TYP })
    .setIssuer(o.iss ?? ISSUER)
    .setAudience(o.aud ?? PUBLIC_URL)
    .setSubject(o.sub ?? 'member')
    .setIssuedAt(now + (o.iat ?? 0))
    .setExpirationTime(now + (o.exp ?? 120))
    .sign(signer.key);
}

const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });
const b64 = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');

/** Valid claims under a header of the caller's, with the signature given (none by default). */
function unsigned(header: Record<string, string>, signature = ''): string {
  const now = Math.floor(Date.now() / 1000);
  const claims = { iss: ISSUER, aud: PUBLIC_URL, sub: 'member', client_id: APP, iat: now, exp: now + 120 };
  return `${b64(header)}.${b64(claims)}.${signature}`;
}

const account = (id: string, ban: { banned?: boolean; banExpires?: Date } = {}) =>
  insertAccounts(database.db, [{ id, ...ban }]);
const delegate = (accountId: string, clientId = APP, revoked = false) =>
  insertDelegation(database.db, { accountId, clientId, scopes: ['pkgreg.registry.read'], revoked });

beforeAll(async () => {
  redis = new Redis(TEST_REDIS_URL, { lazyConnect: true, keyPrefix: `${testKeyPrefix('delegation')}:` });
  const env = { REGISTRY_PUBLIC_URL: PUBLIC_URL, DETAIL_CACHE_TTL_MS: '60000' };
  app = createApp({
    db: database.db,
    redis,
    logger: silentLogger,
    env: loadEnv({ ...env, EDGE_PUBLIC_BASE_URL: `${EDGE}/` }),
  });
  appWithoutEdge = createApp({ db: database.db, redis, logger: silentLogger, env: loadEnv(env) });

  active = await newSigner('active');
  retiring = await newSigner('retiring', new Date(Date.now() + 600_000));
  retired = await newSigner('retired', new Date(Date.now() - 1_000));
  stranger = await newSigner();
  accessKey = await newSigner('active', undefined, 'oauth_signing_keys');

  await insertPackages(database.db, [
    packageRow({ scope: 'secret', name: 'hidden', description: 'The hidden vault runbook.' }),
    packageRow({ scope: 'open', name: 'plain', description: 'A plain public vault helper.' }),
  ]);
  // `member` owns the organisation owning the private scope `secret`: whatever a delegation cannot do,
  // its role would allow. `outsider` belongs to no organisation; `suspended` is a banned owner.
  for (const id of ['member', 'outsider', 'undelegated', 'revoker']) await account(id);
  await account('suspended', { banned: true });
  await account('lapsed', { banned: true, banExpires: new Date(Date.now() - 60_000) });
  await insertOrganisation(database.db, {
    id: 'org-secret',
    name: 'Secret',
    slug: 'secret',
    members: { member: 'owner', undelegated: 'owner', revoker: 'owner', suspended: 'owner', lapsed: 'owner' },
    scopes: { secret: 'private' },
  });
  for (const id of ['member', 'outsider', 'suspended', 'lapsed']) await delegate(id);
  await delegate('undelegated', 'https://other-agent.example/client.json');
  await delegate('revoker', APP, true);
}, 60_000);

afterAll(() => redis?.disconnect());

describe('an assertion that counts reads as the account', () => {
  it("a private package of the account's organisation: detail, SKILL.md and search", async () => {
    const token = await assertion();
    const detail = await request(app).get('/api/packages/@secret/hidden').set(bearer(token)).expect(200);
    expect(detail.body).toMatchObject({ scope: 'secret', name: 'hidden' });
    expect(detail.headers['cache-control']).toBe('private, no-store');
    await request(app).get('/api/packages/@secret/hidden/skill-md').set(bearer(token)).expect(200);
    const found = await request(app).get('/api/search?q=vault').set(bearer(token)).expect(200);
    expect(found.body.results.map((r: { name: string }) => r.name).sort()).toEqual(['hidden', 'plain']);
    expect(found.body.total).toBe(2);
    // Anyone else: missing, and left out of search.
    await request(app).get('/api/packages/@secret/hidden').expect(404);
    const anonymous = await request(app).get('/api/search?q=vault').expect(200);
    expect(anonymous.body.total).toBe(1);
  });

  it('signed by a retiring key (a rotation in progress), and by an account whose ban has ended', async () => {
    const token = await assertion({ signer: retiring });
    await request(app).get('/api/packages/@secret/hidden').set(bearer(token)).expect(200);
    await request(app)
      .get('/api/packages/@secret/hidden')
      .set(bearer(await assertion({ sub: 'lapsed' })))
      .expect(200);
  });

  it('a key the edge rotated in after the registry read its keys is found (reads throttled to 1 a second)', async () => {
    const fresh = await newSigner('active');
    const token = await assertion({ signer: fresh });
    const started = Date.now();
    let status = 0;
    while (Date.now() - started < 3_000) {
      status = (await request(app).get('/api/packages/@secret/hidden').set(bearer(token))).status;
      if (status === 200) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(status).toBe(200);
  });

  it('an account outside the organisation reads public packages only, as anyone does', async () => {
    const token = await assertion({ sub: 'outsider' });
    const hidden = await request(app).get('/api/packages/@secret/hidden').set(bearer(token));
    const missing = await request(app).get('/api/packages/@secret/nothing').set(bearer(token));
    expect(hidden.status).toBe(404);
    expect(hidden.body).toEqual(missing.body);
    await request(app).get('/api/packages/@open/plain').set(bearer(token)).expect(200);
    const found = await request(app).get('/api/search?q=vault').set(bearer(token)).expect(200);
    expect(found.body.total).toBe(1);
  });
});

describe('any assertion that does not count is the same 401', () => {
  const refusals: Array<[label: string, token: () => Promise<string>]> = [
    ['signed by another key under a known kid', () => assertion({ signer: stranger, kid: active.kid })],
    ['signed by a key the edge never published', () => assertion({ signer: stranger })],
    ['signed by a retired key', () => assertion({ signer: retired })],
    // What signs the edge's access tokens never signs for a person: docs/decisions.md, "Delegation keys".
    ["signed by the edge's access-token key", () => assertion({ signer: accessKey })],
    ['another issuer', () => assertion({ iss: 'https://evil.example/mcp' })],
    ['the edge base without /mcp', () => assertion({ iss: EDGE })],
    ['another audience', () => assertion({ aud: 'https://other-registry.example' })],
    ['the edge as audience', () => assertion({ aud: ISSUER })],
    ['expired', () => assertion({ iat: -400, exp: -100 })],
    ['living longer than five minutes', () => assertion({ exp: 301 })],
    ['issued in the future', () => assertion({ iat: 120, exp: 240 })],
    ['an access token of the edge (token passthrough)', () => assertion({ typ: 'at+jwt' })],
    ['the delegation was revoked', () => assertion({ sub: 'revoker' })],
    ['no delegation to this app', () => assertion({ sub: 'undelegated' })],
    ['an account that does not exist', () => assertion({ sub: 'nobody' })],
    ['the account is suspended', () => assertion({ sub: 'suspended' })],
    ['an app acting for itself (sub = client_id)', () => assertion({ sub: APP })],
    ['unsigned (alg none)', async () => unsigned({ alg: 'none', typ: TYP })],
    [
      'HMAC-signed (alg confusion)',
      async () => unsigned({ alg: 'HS256', typ: TYP, kid: active.kid }, 'c2ln'),
    ],
    [
      'claims that are not JSON',
      async () => `${b64({ alg: 'ES256', typ: TYP, kid: active.kid })}.bm90IGpzb24.c2ln`,
    ],
  ];

  it.each(refusals)('%s', async (_label, token) => {
    const presented = await token();
    for (const path of ['/api/packages/@secret/hidden', '/api/packages/@open/plain', '/api/search?q=vault']) {
      const res = await request(app).get(path).set(bearer(presented));
      expect(res.status, path).toBe(401);
      expect(res.body.error).toBe(DELEGATION_REFUSED);
      expect(res.headers['www-authenticate']).toMatch(/^Bearer .*error="invalid_token"/);
    }
  });

  it('a registry that does not know the edge (EDGE_PUBLIC_BASE_URL unset) refuses every one', async () => {
    const res = await request(appWithoutEdge)
      .get('/api/packages/@secret/hidden')
      .set(bearer(await assertion()));
    expect(res.status).toBe(401);
    expect(res.body.error).toBe(DELEGATION_REFUSED);
  });

  it('an access token of the edge is refused however it is written (typ case, media type)', async () => {
    for (const typ of ['AT+JWT', 'application/at+jwt']) {
      const res = await request(app)
        .get('/api/packages/@open/plain')
        .set(bearer(await assertion({ typ })));
      expect(res.status).toBe(401);
    }
  });

  it('a revocation counts at once, though the assertion was accepted a moment before', async () => {
    await account('changing');
    await database.db
      .insertInto('auth_member')
      .values({
        id: 'm-changing',
        organizationId: 'org-secret',
        userId: 'changing',
        role: 'reader',
        createdAt: new Date(),
      })
      .execute();
    await delegate('changing');
    const token = await assertion({ sub: 'changing' });
    await request(app).get('/api/packages/@secret/hidden').set(bearer(token)).expect(200);
    await sql`update edge_delegations set revoked_at = now() where account_id = 'changing'`.execute(
      database.db,
    );
    await request(app).get('/api/packages/@secret/hidden').set(bearer(token)).expect(401);
  });
});

describe('a delegation may only read', () => {
  let token: string;
  beforeAll(async () => {
    token = await assertion();
  });

  it('no upload, deprecation or change of settings, though the account owns the scope', async () => {
    const upload = await request(app)
      .put('/api/packages/@secret/hidden/versions/9.0.0')
      .set(bearer(token))
      .set('Content-Type', 'application/gzip')
      .send(Buffer.from([0x1f, 0x8b, 0x08, 0x00]));
    expect(upload.status, JSON.stringify(upload.body)).toBe(403);
    const deprecate = await request(app)
      .put('/api/packages/@secret/hidden/deprecation')
      .set(bearer(token))
      .send({ message: 'gone' });
    expect(deprecate.status, JSON.stringify(deprecate.body)).toBe(403);
    const settings = await request(app)
      .put('/api/packages/@secret/hidden/settings')
      .set(bearer(token))
      .send({ visibility: 'public' });
    expect(settings.status, JSON.stringify(settings.body)).toBe(403);
    const scope = await request(app)
      .put('/api/scopes/@secret/settings')
      .set(bearer(token))
      .send({ visibility: 'public' });
    expect(scope.status, JSON.stringify(scope.body)).toBe(403);
    const row = await database.db
      .selectFrom('packages')
      .select(['private', 'deprecation_message'])
      .where('scope', '=', 'secret')
      .where('name', '=', 'hidden')
      .executeTakeFirstOrThrow();
    expect(row).toEqual({ private: true, deprecation_message: null });
  });

  it('no tokens, no account pages, no audit log', async () => {
    const created = await request(app)
      .post('/api/tokens')
      .set(bearer(token))
      .send({ name: 'stolen', permission: 'publish', expiresInDays: 30 });
    expect(created.status, JSON.stringify(created.body)).toBe(403);
    for (const path of [
      '/api/tokens',
      '/api/me',
      '/api/orgs/secret/audit',
      '/api/packages/@secret/hidden/settings',
    ]) {
      const res = await request(app).get(path).set(bearer(token));
      expect(res.status, path).toBe(403);
    }
    await request(app).delete('/api/tokens/current').set(bearer(token)).expect(401);
    const tokens = await database.db
      .selectFrom('access_tokens')
      .select('id')
      .where('account_id', '=', 'member')
      .execute();
    expect(tokens).toEqual([]);
  });

  it('no sessions, connected apps or organisations: they are the signed-in person’s', async () => {
    const revoke = await request(app)
      .delete(`/api/connected-apps/${encodeURIComponent(APP)}`)
      .set(bearer(token));
    expect([401, 403]).toContain(revoke.status);
    for (const path of ['/api/connected-apps', '/api/sessions']) {
      const res = await request(app).get(path).set(bearer(token));
      expect([401, 403], path).toContain(res.status);
    }
    const org = await request(app)
      .post('/api/auth/organization/invite-member')
      .set(bearer(token))
      .set('Origin', PUBLIC_URL)
      .send({ email: 'friend@example.com', role: 'owner', organizationId: 'org-secret' });
    expect([401, 403]).toContain(org.status);
    const live = await database.db
      .selectFrom('edge_delegations')
      .select('revoked_at')
      .where('account_id', '=', 'member')
      .where('client_id', '=', APP)
      .executeTakeFirstOrThrow();
    expect(live.revoked_at).toBeNull();
    const invited = await database.db.selectFrom('auth_invitation').select('id').execute();
    expect(invited).toEqual([]);
  });
});
