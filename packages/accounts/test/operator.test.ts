import { useTestDatabase } from '@pkgreg/db/vitest';
import { describe, expect, it } from 'vitest';
import {
  accessOfAccount,
  OperatorError,
  seedDemoAccounts,
  setOrganizationSuspended,
  setSiteAdmin,
  suspendAccount,
  takeOverOrganization,
  unsuspendAccount,
} from '../src/index.js';

// The operator's account commands (`pnpm registry site-admin|suspend|unsuspend|org …`) as functions
// against a real database: each change, its effect on what the account reaches, and its audit entry.

const t = useTestDatabase();

describe('operator commands', () => {
  it('seeds the demo account, organisation and private scope once, however often it runs', async () => {
    const first = await seedDemoAccounts(t.db);
    await seedDemoAccounts(t.db);
    expect(first).toEqual({
      email: 'developer@dev.pkgreg.invalid',
      organization: 'demo-team',
      privateScope: 'demo-team',
    });
    expect(await t.db.selectFrom('auth_member').select('role').execute()).toEqual([{ role: 'owner' }]);
    expect(await t.db.selectFrom('scope_settings').select(['scope', 'visibility']).execute()).toEqual([
      { scope: 'demo-team', visibility: 'private' },
    ]);
  });

  it('names site administrators, suspends and lifts; a suspended organisation gives its members nothing', async () => {
    const { email } = await seedDemoAccounts(t.db);
    const account = await t.db
      .selectFrom('auth_user')
      .select('id')
      .where('email', '=', email)
      .executeTakeFirstOrThrow();
    await setSiteAdmin(t.db, email, true);
    expect((await t.db.selectFrom('auth_user').select('role').executeTakeFirstOrThrow()).role).toBe('admin');
    await setSiteAdmin(t.db, email, false);
    expect((await t.db.selectFrom('auth_user').select('role').executeTakeFirstOrThrow()).role).toBeNull();

    await suspendAccount(t.db, email, 'spam');
    await unsuspendAccount(t.db, email);
    expect((await t.db.selectFrom('auth_user').select('banned').executeTakeFirstOrThrow()).banned).toBe(
      false,
    );

    expect([...(await accessOfAccount(t.db, account.id)).roles]).toEqual([['demo-team', 'owner']]);
    await setOrganizationSuspended(t.db, 'demo-team', true, 'abuse');
    expect([...(await accessOfAccount(t.db, account.id)).roles]).toEqual([]);
    await setOrganizationSuspended(t.db, 'demo-team', false);
    expect([...(await accessOfAccount(t.db, account.id)).roles]).toEqual([['demo-team', 'owner']]);

    await expect(suspendAccount(t.db, 'nobody@example.invalid', 'x')).rejects.toBeInstanceOf(OperatorError);
    await expect(setOrganizationSuspended(t.db, 'no-such-org', true)).rejects.toThrow(
      'No organisation no-such-org',
    );
  });

  it('takes over an organisation for an account, which becomes an owner', async () => {
    await seedDemoAccounts(t.db);
    await t.db
      .insertInto('auth_user')
      .values({
        id: 'u-new',
        name: 'new',
        email: 'new@example.invalid',
        emailVerified: true,
        updatedAt: new Date(),
      })
      .execute();
    await takeOverOrganization(t.db, 'demo-team', 'NEW@example.invalid', 'owners left');
    const member = await t.db
      .selectFrom('auth_member')
      .select('role')
      .where('userId', '=', 'u-new')
      .executeTakeFirstOrThrow();
    expect(member.role).toBe('owner');
    const actions = await t.db
      .selectFrom('account_audit_events')
      .select(['action', 'actor_id'])
      .orderBy('id')
      .execute();
    expect(actions.at(-1)).toEqual({ action: 'organization.take-over', actor_id: 'operator' });
  });
});
