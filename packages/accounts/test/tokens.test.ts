import { randomUUID } from 'node:crypto';
import { useTestDatabase } from '@pkgreg/db/vitest';
import { describe, expect, it } from 'vitest';
import {
  accessOfAccount,
  addressAllowed,
  canAct,
  generateToken,
  isWellFormedToken,
  TOKEN_PATTERN,
} from '../src/index.js';

// Token form (prefix, checksum, the pattern secret scanners use), address ranges, and what a token's
// limits leave of its account's reach.

const t = useTestDatabase();

describe('token form', () => {
  it('is pkgreg_ + 36 base62 characters whose last 6 are a checksum; a typo fails it without a lookup', () => {
    const { token, hash, prefix } = generateToken();
    expect(token).toMatch(/^pkgreg_[0-9A-Za-z]{36}$/);
    expect(TOKEN_PATTERN.test(`leaked: ${token} in a log`)).toBe(true);
    expect(isWellFormedToken(token)).toBe(true);
    expect(hash).toHaveLength(32);
    expect(prefix).toBe(token.slice(0, 11));
    const last = token.at(-8) === 'a' ? 'b' : 'a';
    expect(isWellFormedToken(`${token.slice(0, -8)}${last}${token.slice(-7)}`)).toBe(false);
    expect(isWellFormedToken(token.slice(0, -1))).toBe(false);
    expect(generateToken().token).not.toBe(token);
  });

  it('address ranges: IPv4, IPv6, IPv4-mapped IPv6; none means anywhere', () => {
    expect(addressAllowed('10.1.2.3', [])).toBe(true);
    expect(addressAllowed('10.1.2.3', ['10.0.0.0/8'])).toBe(true);
    expect(addressAllowed('::ffff:10.1.2.3', ['10.0.0.0/8'])).toBe(true);
    expect(addressAllowed('11.1.2.3', ['10.0.0.0/8'])).toBe(false);
    expect(addressAllowed('2001:db8::1', ['2001:db8::/32', '10.0.0.0/8'])).toBe(true);
    expect(addressAllowed(undefined, ['10.0.0.0/8'])).toBe(false);
  });
});

describe('a token limits its account', () => {
  it('to organisations, scopes or single packages, never beyond what the account reaches', async () => {
    const account = randomUUID();
    const org = randomUUID();
    await t.db
      .insertInto('auth_user')
      .values({ id: account, name: 'a', email: 'a@x.invalid', emailVerified: true, updatedAt: new Date() })
      .execute();
    await t.db
      .insertInto('auth_organization')
      .values({ id: org, name: 'o', slug: 'o', createdAt: new Date() })
      .execute();
    await t.db
      .insertInto('auth_member')
      .values({
        id: randomUUID(),
        organizationId: org,
        userId: account,
        role: 'publisher',
        createdAt: new Date(),
      })
      .execute();
    await t.db
      .insertInto('scope_settings')
      .values([
        { scope: 'team', organization_id: org, visibility: 'private' },
        { scope: 'mine', account_id: account },
        { scope: 'theirs', visibility: 'private' },
      ])
      .execute();

    const all = await accessOfAccount(t.db, account);
    expect(Object.fromEntries(all.roles)).toEqual({ team: 'publisher', mine: 'owner' });
    expect(canAct(all, 'team', 'x', 'publisher')).toBe(true);
    expect(canAct(all, 'team', 'x', 'admin')).toBe(false);

    const byOrg = await accessOfAccount(t.db, account, { organizations: [org], scopes: [], packages: [] });
    expect(byOrg.read).toEqual({ scopes: ['team'], packages: [] });

    const byPackage = await accessOfAccount(t.db, account, {
      organizations: [],
      scopes: [],
      packages: ['team/runbook', 'theirs/x'],
    });
    expect(byPackage.read).toEqual({ scopes: [], packages: ['team/runbook'] });
    expect(canAct(byPackage, 'team', 'runbook', 'publisher')).toBe(true);
    expect(canAct(byPackage, 'team', 'other', 'reader')).toBe(false);

    const elsewhere = await accessOfAccount(t.db, account, {
      organizations: [],
      scopes: ['theirs'],
      packages: [],
    });
    expect(elsewhere.roles.size).toBe(0);
  });
});
