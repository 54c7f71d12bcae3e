import { useTestDatabase } from '@pkgreg/db/vitest';
import { describe, expect, it } from 'vitest';
import { bindScope, checkPackageOwner, decideScope, findScopeOwner, ScopeTakenError } from '../src/index.js';

// How a scope is bound to its owner (docs/publishing.md): by the code host's account id, first come.

const database = useTestDatabase();

describe('scope binding', () => {
  it('the first claim binds the scope; a renamed account keeps it and its new login is recorded', async () => {
    const db = database.db;
    expect(await bindScope(db, { scope: 'acme', ownerId: 101, login: 'acme' }, 'index')).toBe('acme');
    expect(await findScopeOwner(db, 'acme')).toMatchObject({
      owner_id: 101,
      owner_login: 'acme',
      bound_by: 'index',
    });
    const renamed = { scope: 'acme-renamed', ownerId: 101, login: 'acme-renamed' };
    expect(await decideScope(db, renamed)).toMatchObject({ ok: true, scope: 'acme' });
    expect(await bindScope(db, renamed, 'publish')).toBe('acme');
    expect(await findScopeOwner(db, 'acme')).toMatchObject({ owner_id: 101, owner_login: 'acme-renamed' });
    expect(await findScopeOwner(db, 'acme-renamed')).toBeUndefined();
  });

  it('another account on a freed login is refused and binds nothing', async () => {
    const db = database.db;
    const intruder = { scope: 'acme', ownerId: 202, login: 'acme' };
    const decision = await decideScope(db, intruder);
    expect(decision.ok).toBe(false);
    await expect(bindScope(db, intruder, 'publish')).rejects.toBeInstanceOf(ScopeTakenError);
    expect(await findScopeOwner(db, 'acme')).toMatchObject({ owner_id: 101 });
  });

  it('owner actions need the account that owns the package scope', async () => {
    const db = database.db;
    const pkg = { scope: 'acme', name: 'report' };
    expect(
      await checkPackageOwner(db, { scope: 'acme-renamed', ownerId: 101, login: 'acme-renamed' }, pkg),
    ).toEqual({
      ok: true,
      bound: true,
    });
    const other = await checkPackageOwner(db, { scope: 'globex', ownerId: 303, login: 'globex' }, pkg);
    expect(other).toEqual({
      ok: false,
      message: '@acme/report is in scope @acme; the account globex (id 303) owns @globex',
    });
    const taken = await checkPackageOwner(db, { scope: 'acme', ownerId: 202, login: 'acme' }, pkg);
    expect(taken.ok === false && taken.message.startsWith('Refused: scope @acme belongs to')).toBe(true);
  });

  it('a scope a pkgreg account holds (claimed by an upload) is not bound to a code-host login naming it', async () => {
    const db = database.db;
    await db
      .insertInto('auth_user')
      .values({ id: 'u-dana', name: 'dana', email: 'dana@example.test', emailVerified: true })
      .execute();
    await db.insertInto('scope_settings').values({ scope: 'dana', account_id: 'u-dana' }).execute();
    const squatter = { scope: 'dana', ownerId: 404, login: 'dana' };
    expect(await decideScope(db, squatter)).toMatchObject({
      ok: false,
      message: expect.stringMatching(/belongs to a pkgreg account or organisation/),
    });
    await expect(bindScope(db, squatter, 'publish')).rejects.toBeInstanceOf(ScopeTakenError);
    expect(await findScopeOwner(db, 'dana')).toBeUndefined();
    // The account's own GitHub identity may bind it.
    await db
      .insertInto('auth_account')
      .values({
        id: 'a-dana',
        accountId: '404',
        providerId: 'github',
        userId: 'u-dana',
        updatedAt: new Date(),
      })
      .execute();
    expect(await bindScope(db, squatter, 'publish')).toBe('dana');
  });
});
