import { type Database, queryNamed } from '@pkgreg/db';
import type { Kysely } from 'kysely';
import type { Role } from './roles.js';

// Which scopes an account reaches, and with what role (docs/accounts.md, "Who owns a scope"):
// - a scope whose settings name one of its organisations: the member's role there;
// - a scope whose settings name the account itself: owner;
// - a scope bound to a code-host account id (scope_owners) the account signed in with: owner;
// - a scope bound to the code-host organisation an organisation of its linked: the member's role.
// A suspended organisation gives nothing. One statement, run when the API has not kept the reach: every branch
// starts from the account's own rows and reaches scopes through an index, never a scan of all scopes.

type Conn = Kysely<Database>;

export interface ScopeRoleRow {
  scope: string;
  role: Role;
  organization_id: string | null;
}

// A named statement: PostgreSQL plans this union for longer than it runs it, so each connection plans
// it once.
const SCOPE_ROLES = `
    select s.scope, m."role" as role, s.organization_id
      from scope_settings s
      join auth_member m on m."organizationId" = s.organization_id and m."userId" = $1
      join auth_organization o on o."id" = s.organization_id and o."suspendedAt" is null
    union all
    select s.scope, 'owner', null from scope_settings s where s.account_id = $1
    union all
    select so.scope, 'owner', null
      from scope_owners so
     where so.owner_id in (
       select a."accountId"::bigint from auth_account a
        where a."userId" = $1 and a."providerId" = 'github' and a."accountId" ~ '^[0-9]{1,18}$')
    union all
    select so.scope, m."role", o."id"
      from auth_member m
      join auth_organization o on o."id" = m."organizationId" and o."suspendedAt" is null and o."githubOrgId" is not null
      join scope_owners so on so.owner_id = o."githubOrgId"
     where m."userId" = $1`;

export async function scopeRolesOfAccount(db: Conn, accountId: string): Promise<ScopeRoleRow[]> {
  return queryNamed<ScopeRoleRow>(db, 'pkgreg_scope_roles', SCOPE_ROLES, [accountId]);
}

/** The account's role in an organisation, when it is a member of an organisation not suspended. */
export async function memberRole(
  db: Conn,
  organizationId: string,
  accountId: string,
): Promise<Role | undefined> {
  const row = await db
    .selectFrom('auth_member')
    .innerJoin('auth_organization', 'auth_organization.id', 'auth_member.organizationId')
    .select('auth_member.role')
    .where('auth_member.organizationId', '=', organizationId)
    .where('auth_member.userId', '=', accountId)
    .where('auth_organization.suspendedAt', 'is', null)
    .executeTakeFirst();
  return row?.role;
}
