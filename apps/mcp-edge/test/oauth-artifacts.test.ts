import { createTestDatabase, type TestDatabase } from '@pkgreg/db/testing';
import { sql } from 'kysely';
import { errors } from 'oidc-provider';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createArtifactAdapter, idHash } from '../src/oauth/provider/artifact-adapter.js';

// The storage oidc-provider will use for codes, refresh tokens, grants, sessions and interactions
// (docs/plans/edge-oauth.md). What the provider cannot guarantee itself is tested here: a code or refresh
// token is consumed once however close two uses come, and a reuse ends its whole grant.

let t: TestDatabase;
let adapter: ReturnType<typeof createArtifactAdapter>;
beforeAll(async () => {
  t = await createTestDatabase();
  adapter = createArtifactAdapter(t.db, { dynamicClientUnusedDays: 30 });
});
afterAll(async () => {
  await t?.destroy();
});

const payload = (extra: Record<string, unknown> = {}) => ({
  accountId: 'acct_1',
  clientId: 'https://app.example/client.json',
  grantId: 'grant-1',
  ...extra,
});

describe('the oidc-provider artifact adapter', () => {
  it('keeps only the hash of an id: the stored rows hold no usable code', async () => {
    const codes = adapter('AuthorizationCode');
    await codes.upsert('code-secret-value', payload(), 60);
    expect(await codes.find('code-secret-value')).toMatchObject(payload());
    const { rows } = await sql<{ id_hash: string; text: string }>`
      select id_hash, payload::text as text from edge_oauth_artifacts where model = 'AuthorizationCode'`.execute(
      t.db,
    );
    expect(rows.map((r) => r.id_hash)).toEqual([idHash('code-secret-value')]);
    expect(JSON.stringify(rows)).not.toContain('code-secret-value');
    // Another model's row of the same id is another row.
    expect(await adapter('RefreshToken').find('code-secret-value')).toBeUndefined();
  });

  it('an expired artifact is not found; upsert replaces; destroy removes', async () => {
    const sessions = adapter('Session');
    await sessions.upsert('s-1', { uid: 'uid-1', accountId: 'acct_1' }, 60);
    expect(await sessions.findByUid('uid-1')).toMatchObject({ accountId: 'acct_1' });
    await sessions.upsert('s-1', { uid: 'uid-1', accountId: 'acct_2' }, 60);
    expect(await sessions.find('s-1')).toMatchObject({ accountId: 'acct_2' });
    await sql`update edge_oauth_artifacts set expires_at = now() - interval '1 second'
      where model = 'Session'`.execute(t.db);
    expect(await sessions.find('s-1')).toBeUndefined();
    expect(await sessions.findByUid('uid-1')).toBeUndefined();
    await sessions.destroy('s-1');
    const { rows } = await sql`select 1 from edge_oauth_artifacts where model = 'Session'`.execute(t.db);
    expect(rows).toHaveLength(0);
  });

  it('consumes once: of two concurrent uses one fails with invalid_grant and the grant family is gone', async () => {
    const tokens = adapter('RefreshToken');
    const grants = adapter('Grant');
    await grants.upsert('grant-2', { accountId: 'acct_1', clientId: 'app' }, 3600);
    await tokens.upsert('rt-1', payload({ grantId: 'grant-2' }), 3600);
    await tokens.upsert('rt-other', payload({ grantId: 'grant-2' }), 3600);
    await adapter('AuthorizationCode').upsert('code-2', payload({ grantId: 'grant-2' }), 60);
    await tokens.upsert('rt-unrelated', payload({ grantId: 'grant-3' }), 3600);

    const results = await Promise.allSettled([tokens.consume('rt-1'), tokens.consume('rt-1')]);
    const failed = results.filter((r) => r.status === 'rejected');
    expect(failed).toHaveLength(1);
    const reason = (failed[0] as PromiseRejectedResult).reason;
    expect(reason).toBeInstanceOf(errors.InvalidGrant);
    expect(reason.error).toBe('invalid_grant');
    // The reuse took every artifact of grant-2, the grant included; another grant's are untouched.
    expect(await tokens.find('rt-other')).toBeUndefined();
    expect(await grants.find('grant-2')).toBeUndefined();
    expect(await adapter('AuthorizationCode').find('code-2')).toBeUndefined();
    expect(await tokens.find('rt-unrelated')).toMatchObject({ grantId: 'grant-3' });
  });

  it('a consumed artifact reads as consumed (the provider refuses it and revokes the grant itself)', async () => {
    const codes = adapter('AuthorizationCode');
    await codes.upsert('code-3', payload({ grantId: 'grant-4' }), 60);
    await codes.consume('code-3');
    const found = await codes.find('code-3');
    expect(typeof found?.consumed).toBe('number');
    await codes.revokeByGrantId('grant-4');
    expect(await codes.find('code-3')).toBeUndefined();
  });

  it('keeps a registered client with its secret hashed, forgotten when unused', async () => {
    const clients = adapter('Client');
    await clients.upsert('dcr_1', { client_id: 'dcr_1', client_secret: 'pks_clear', redirect_uris: ['x'] });
    const found = await clients.find('dcr_1');
    expect(found).toMatchObject({ client_id: 'dcr_1', redirect_uris: ['x'] });
    expect(String(found?.client_secret)).toMatch(/^scrypt\$/);
    const { rows } = await sql<{ text: string }>`
      select metadata::text || coalesce(secret_hash, '') as text from edge_dynamic_clients`.execute(t.db);
    expect(JSON.stringify(rows)).not.toContain('pks_clear');
    // A use pushes the expiry back; an expired client is unknown.
    await sql`update edge_dynamic_clients set expires_at = now() - interval '1 second'`.execute(t.db);
    expect(await clients.find('dcr_1')).toBeUndefined();
    expect(await clients.find('https://app.example/client.json')).toBeUndefined();
  });
});
