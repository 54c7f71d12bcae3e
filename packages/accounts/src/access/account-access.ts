import type { Database } from '@pkgreg/db';
import type { ReadAccess } from '@pkgreg/registry';
import type { Kysely } from 'kysely';
import { scopeRolesOfAccount } from './access.repository.js';
import { atLeast, type Role, stronger } from './roles.js';

// What an account (or one of its tokens) may do, computed per request from its memberships, so that
// removing a member, suspending an organisation or revoking a token takes effect on the next request.

/**
 * A token's limits: organisations (ids), scopes and `scope/name` packages, whose union the token may
 * reach within what its account reaches. All empty: everything the account reaches.
 */
export interface TokenLimits {
  organizations: readonly string[];
  scopes: readonly string[];
  packages: readonly string[];
}

export const NO_LIMITS: TokenLimits = { organizations: [], scopes: [], packages: [] };

export interface AccountAccess {
  /** Each scope the account reaches, with its strongest role there. */
  roles: ReadonlyMap<string, Role>;
  /** Scopes reached whole; a scope in `roles` but not here is reached only for `read.packages`. */
  wholeScopes: ReadonlySet<string>;
  /** Private packages it may read. */
  read: ReadAccess;
}

function unlimited(limits: TokenLimits): boolean {
  return limits.organizations.length === 0 && limits.scopes.length === 0 && limits.packages.length === 0;
}

export async function accessOfAccount(
  db: Kysely<Database>,
  accountId: string,
  limits: TokenLimits = NO_LIMITS,
): Promise<AccountAccess> {
  const roles = new Map<string, Role>();
  const whole = new Set<string>();
  const all = unlimited(limits);
  for (const row of await scopeRolesOfAccount(db, accountId)) {
    const wholeHere =
      all ||
      limits.scopes.includes(row.scope) ||
      (row.organization_id !== null && limits.organizations.includes(row.organization_id));
    const somePackage = limits.packages.some((pkg) => pkg.startsWith(`${row.scope}/`));
    if (!wholeHere && !somePackage) continue;
    if (wholeHere) whole.add(row.scope);
    const had = roles.get(row.scope);
    roles.set(row.scope, had ? stronger(had, row.role) : row.role);
  }
  const packages = limits.packages.filter((pkg) => {
    const scope = pkg.slice(0, pkg.indexOf('/'));
    return roles.has(scope) && !whole.has(scope);
  });
  return { roles, wholeScopes: whole, read: { scopes: [...whole], packages } };
}

/** Whether the access reaches `scope` (and `name`, when given) with at least `least`. */
export function canAct(access: AccountAccess, scope: string, name: string | null, least: Role): boolean {
  const role = access.roles.get(scope);
  if (!role || !atLeast(role, least)) return false;
  if (access.wholeScopes.has(scope)) return true;
  return name !== null && access.read.packages.includes(`${scope}/${name}`);
}
