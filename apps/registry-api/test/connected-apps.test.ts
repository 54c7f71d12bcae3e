import type { RequestListener } from 'node:http';
import { ConnectedAppListSchema, SCOPES } from '@pkgreg/contracts';
import { TEST_REDIS_URL, testKeyPrefix } from '@pkgreg/db/testing';
import { useTestDatabase } from '@pkgreg/db/vitest';
import { createLogger } from '@pkgreg/server-kit';
import { Redis } from 'ioredis';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../src/app.js';
import { loadEnv } from '../src/env.js';
import { createTokenAs, signInAs } from './account-helpers.js';

// docs/accounts.md, "Connected apps": GET /api/connected-apps and DELETE /api/connected-apps/{clientId},
// with the security cases (no credentials, tokens, cross-site, another account's app). The edge's rows
// (delegations, oidc-provider artifacts) are inserted directly, as the edge writes them.

const PUBLIC_URL = 'http://registry.test';
const ORIGIN = PUBLIC_URL;
const APP = 'https://app.example/oauth/client.json';
const OTHER_APP = 'https://other.example/client.json';
const database = useTestDatabase();
const prefix = testKeyPrefix('connected-apps');
let redis: Redis;
let app: RequestListener;
let ada: request.Agent;
let bob: request.Agent;
let adaId: string;
let bobId: string;

beforeAll(async () => {
  redis = new Redis(TEST_REDIS_URL, { lazyConnect: true, keyPrefix: `${prefix}:` });
  const env = loadEnv({ REGISTRY_PUBLIC_URL: PUBLIC_URL, DEV_SIGN_IN: 'true', SIGN_IN_PER_MINUTE: '1000' });
  app = createApp({ db: database.db, redis, logger: createLogger('connected-apps-test', 'silent'), env });
  ada = await signInAs(app, ORIGIN, 'apps-ada');
  bob = await signInAs(app, ORIGIN, 'apps-bob');
  const users = await database.db.selectFrom('auth_user').select(['id', 'name']).execute();
  adaId = users.find((u) => u.name === 'apps-ada')?.id ?? '';
  bobId = users.find((u) => u.name === 'apps-bob')?.id ?? '';
});

afterAll(() => redis?.disconnect());

const path = (clientId: string) => `/api/connected-apps/${encodeURIComponent(clientId)}`;
const revoke = (agent: request.Agent, clientId: string) => agent.delete(path(clientId)).set('Origin', ORIGIN);

async function connect(
  accountId: string,
  clientId: string,
  fields: { scopes?: string[]; grantId?: string; createdAt?: Date; revokedAt?: Date } = {},
) {
  await database.db
    .insertInto('edge_delegations')
    .values({
      account_id: accountId,
      client_id: clientId,
      client_name: `Name of ${clientId}`,
      scopes: fields.scopes ?? [SCOPES.registryRead],
      grant_id: fields.grantId ?? null,
      created_at: fields.createdAt ?? new Date(),
      revoked_at: fields.revokedAt ?? null,
    })
    .execute();
}

/** An oidc-provider artifact as the edge's adapter stores it (only the columns a revocation reads). */
async function artifact(idHash: string, of: { accountId?: string; clientId?: string; grantId?: string }) {
  await database.db
    .insertInto('edge_oauth_artifacts')
    .values({
      model: 'RefreshToken',
      id_hash: idHash,
      payload: JSON.stringify({ kind: 'RefreshToken' }),
      account_id: of.accountId ?? null,
      client_id: of.clientId ?? null,
      grant_id: of.grantId ?? null,
    })
    .execute();
}

async function artifactIds(): Promise<string[]> {
  const rows = await database.db
    .selectFrom('edge_oauth_artifacts')
    .select('id_hash')
    .orderBy('id_hash')
    .execute();
  return rows.map((r) => r.id_hash);
}

async function accessVersion(): Promise<number> {
  const row = await database.db.selectFrom('edge_access_version').select('version').executeTakeFirstOrThrow();
  return Number(row.version);
}

const live = (accountId: string, clientId: string) =>
  database.db
    .selectFrom('edge_delegations')
    .select(['revoked_at', 'grant_id'])
    .where('account_id', '=', accountId)
    .where('client_id', '=', clientId)
    .executeTakeFirst();

describe('connected apps', () => {
  beforeAll(async () => {
    await connect(adaId, APP, {
      scopes: [SCOPES.registryRead, SCOPES.stmRead],
      grantId: 'grant-ada-app',
      createdAt: new Date('2026-11-01T00:00:00Z'),
    });
    await connect(adaId, OTHER_APP, { createdAt: new Date('2026-11-20T00:00:00Z') });
    await connect(adaId, 'https://gone.example/client.json', { revokedAt: new Date() });
    await connect(bobId, APP, { grantId: 'grant-bob-app' });
    await connect(bobId, 'https://only-bob.example/client.json');
    await artifact('a1-ada-app', { accountId: adaId, clientId: APP, grantId: 'grant-ada-app' });
    await artifact('a2-ada-app-code', { accountId: adaId, clientId: APP });
    // A grant's own row need not name the account: it goes because its grant is the delegation's.
    await artifact('a3-ada-grant', { grantId: 'grant-ada-app' });
    await artifact('b1-ada-other', { accountId: adaId, clientId: OTHER_APP, grantId: 'grant-ada-other' });
    await artifact('b2-bob-app', { accountId: bobId, clientId: APP, grantId: 'grant-bob-app' });
  });

  it("lists the signed-in person's live apps, newest first, and nobody else's", async () => {
    const res = await ada.get('/api/connected-apps');
    expect(res.status, res.text).toBe(200);
    const { apps } = ConnectedAppListSchema.parse(res.body);
    expect(apps).toEqual([
      {
        clientId: OTHER_APP,
        clientName: `Name of ${OTHER_APP}`,
        scopes: [SCOPES.registryRead],
        createdAt: '2026-11-20T00:00:00.000Z',
        lastUsedAt: null,
      },
      {
        clientId: APP,
        clientName: `Name of ${APP}`,
        scopes: [SCOPES.registryRead, SCOPES.stmRead],
        createdAt: '2026-11-01T00:00:00.000Z',
        lastUsedAt: null,
      },
    ]);
  });

  it('revoking one: revoked, its artifacts of this account (and of its grant) deleted, the edge told; the rest stays', async () => {
    const version = await accessVersion();
    const res = await revoke(ada, APP);
    expect(res.status, res.text).toBe(204);
    expect(res.text).toBe('');
    expect((await live(adaId, APP))?.revoked_at).toBeInstanceOf(Date);
    expect(await artifactIds()).toEqual(['b1-ada-other', 'b2-bob-app']);
    expect(await accessVersion()).toBeGreaterThan(version);
    expect((await live(bobId, APP))?.revoked_at).toBeNull();
    const { apps } = ConnectedAppListSchema.parse((await ada.get('/api/connected-apps')).body);
    expect(apps.map((a) => a.clientId)).toEqual([OTHER_APP]);
    const audit = await database.db
      .selectFrom('account_audit_events')
      .select(['action', 'target'])
      .where('actor_id', '=', adaId)
      .execute();
    expect(audit).toContainEqual({ action: 'connected-app.revoke', target: APP });
    // Revoked already: as missing as an app never connected.
    expect((await revoke(ada, APP)).status).toBe(404);
    expect((await revoke(ada, 'https://never.example/client.json')).status).toBe(404);
  });

  it("another account's app is a 404, and nothing of it changes", async () => {
    const before = await artifactIds();
    const res = await revoke(ada, 'https://only-bob.example/client.json');
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ error: 'Connected app not found' });
    expect((await live(bobId, 'https://only-bob.example/client.json'))?.revoked_at).toBeNull();
    expect(await artifactIds()).toEqual(before);
    const { apps } = ConnectedAppListSchema.parse((await bob.get('/api/connected-apps')).body);
    expect(apps.map((a) => a.clientId).sort()).toEqual([APP, 'https://only-bob.example/client.json']);
  });

  it('no credentials: 401 with a Bearer challenge, for both', async () => {
    for (const res of [
      await request(app).get('/api/connected-apps'),
      await request(app).delete(path(OTHER_APP)),
    ]) {
      expect(res.status).toBe(401);
      expect(res.headers['www-authenticate']).toMatch(/^Bearer /);
      expect(res.body).toEqual({ error: 'Sign in to manage connected apps' });
    }
    expect((await live(adaId, OTHER_APP))?.revoked_at).toBeNull();
  });

  it('an access token, even a publish one without limits, is refused (403) and revokes nothing', async () => {
    const { token } = await createTokenAs(ada, ORIGIN, { permission: 'publish' });
    const list = await request(app).get('/api/connected-apps').set('Authorization', `Bearer ${token}`);
    expect(list.status).toBe(403);
    const del = await request(app).delete(path(OTHER_APP)).set('Authorization', `Bearer ${token}`);
    expect(del.status).toBe(403);
    expect(del.body).toEqual({ error: 'Connected apps are managed while signed in, not with a token' });
    expect((await live(adaId, OTHER_APP))?.revoked_at).toBeNull();
  });

  it('a cross-site revocation with the session cookie is refused (403)', async () => {
    const res = await ada.delete(path(OTHER_APP)).set('Origin', 'https://evil.example');
    expect(res.status).toBe(403);
    expect((await live(adaId, OTHER_APP))?.revoked_at).toBeNull();
  });
});
