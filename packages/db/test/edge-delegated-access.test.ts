import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../src/testing.js';

// Migration 2026-11-29T0400-edge-delegated-access: the tables the edge's code flow and the registry's
// consent page share. What the database itself must refuse or announce is tested here.

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
  await sql`insert into auth_user ("id", "name", "email", "emailVerified", "createdAt", "updatedAt")
    values ('acct_1', 'one', 'one@example.com', true, now(), now())`.execute(t.db);
});
afterAll(async () => {
  await t?.destroy();
});

const accessVersion = async () =>
  Number((await sql<{ v: string }>`select version as v from edge_access_version`.execute(t.db)).rows[0]?.v);

const consentRequest = (id: string, extra: Record<string, unknown> = {}) =>
  t.db
    .insertInto('edge_consent_requests')
    .values({
      id_hash: id,
      interaction_uid: `uid-${id}`,
      client_id: 'https://app.example/client.json',
      client_kind: 'metadata_document',
      client_name: 'App',
      client_uri: null,
      logo_uri: null,
      redirect_host: '127.0.0.1',
      resource: 'http://localhost:4100/mcp',
      scopes: ['pkgreg.system.read'],
      binding_hash: 'b',
      account_id: null,
      decision: null,
      decision_code_hash: null,
      decided_at: null,
      consumed_at: null,
      expires_at: new Date(Date.now() + 600_000),
      ...extra,
    })
    .execute();

describe('edge delegated access tables', () => {
  it('a decision needs an account and its time; an unknown kind or decision is refused', async () => {
    await consentRequest('ok');
    await expect(consentRequest('no-account', { decision: 'allow', decided_at: new Date() })).rejects.toThrow(
      /check constraint/,
    );
    await expect(consentRequest('no-time', { account_id: 'acct_1', decision: 'allow' })).rejects.toThrow(
      /check constraint/,
    );
    await expect(consentRequest('kind', { client_kind: 'other' })).rejects.toThrow(/check constraint/);
    await expect(
      consentRequest('decision', { account_id: 'acct_1', decision: 'maybe', decided_at: new Date() }),
    ).rejects.toThrow(/check constraint/);
    // One request per interaction.
    await expect(consentRequest('again', { interaction_uid: 'uid-ok' })).rejects.toThrow(/unique/);
  });

  it('every change of a delegation bumps edge_access_version (edges refuse a revoked app at once)', async () => {
    const before = await accessVersion();
    await sql`insert into edge_delegations (account_id, client_id, scopes)
      values ('acct_1', 'app', '{pkgreg.system.read}')`.execute(t.db);
    const inserted = await accessVersion();
    expect(inserted).toBeGreaterThan(before);
    await sql`update edge_delegations set revoked_at = now() where client_id = 'app'`.execute(t.db);
    expect(await accessVersion()).toBeGreaterThan(inserted);
  });

  it("an account's removal takes its delegations and consent requests with it", async () => {
    await sql`insert into auth_user ("id", "name", "email", "emailVerified", "createdAt", "updatedAt")
      values ('acct_2', 'two', 'two@example.com', true, now(), now())`.execute(t.db);
    await sql`insert into edge_delegations (account_id, client_id, scopes) values ('acct_2', 'app', '{}')`.execute(
      t.db,
    );
    await consentRequest('acct2', { account_id: 'acct_2' });
    await sql`delete from auth_user where "id" = 'acct_2'`.execute(t.db);
    const left = await sql<{ n: number }>`select
      (select count(*) from edge_delegations where account_id = 'acct_2')
      + (select count(*) from edge_consent_requests where account_id = 'acct_2') as n`.execute(t.db);
    expect(Number(left.rows[0]?.n)).toBe(0);
  });
});
