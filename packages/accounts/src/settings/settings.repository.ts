import type { Database } from '@pkgreg/db';
import { type Kysely, sql } from 'kysely';

// Scope and package settings: visibility, the scope's organisation, trusted publishers. The database's
// triggers keep packages.private true to both visibilities (migration 2026-11-29T0100-accounts).

type Conn = Kysely<Database>;

export interface ScopeSettingsRow {
  scope: string;
  visibility: 'public' | 'private';
  organization_id: string | null;
  organization_slug: string | null;
  organization_name: string | null;
}

export async function findScopeSettings(db: Conn, scope: string): Promise<ScopeSettingsRow | undefined> {
  return db
    .selectFrom('scope_settings')
    .leftJoin('auth_organization', 'auth_organization.id', 'scope_settings.organization_id')
    .select([
      'scope_settings.scope',
      'scope_settings.visibility',
      'scope_settings.organization_id',
      'auth_organization.slug as organization_slug',
      'auth_organization.name as organization_name',
    ])
    .where('scope_settings.scope', '=', scope)
    .executeTakeFirst();
}

/** A scope nobody holds yet: no code-host binding, no settings, no package. */
export async function isScopeUnclaimed(db: Conn, scope: string): Promise<boolean> {
  const held = await db
    .selectFrom('scope_owners')
    .select('scope')
    .where('scope', '=', scope)
    .union(db.selectFrom('scope_settings').select('scope').where('scope', '=', scope))
    .union(db.selectFrom('packages').select('scope').where('scope', '=', scope).limit(1))
    .executeTakeFirst();
  return held === undefined;
}

/**
 * Gives an unclaimed scope to one account (its first upload, docs/publishing.md): false when another
 * writer's row got there first.
 */
export async function claimScopeForAccount(db: Conn, scope: string, accountId: string): Promise<boolean> {
  const row = await db
    .insertInto('scope_settings')
    .values({ scope, account_id: accountId })
    .onConflict((oc) => oc.column('scope').doNothing())
    .returning('scope')
    .executeTakeFirst();
  return row !== undefined;
}

export async function upsertScopeSettings(
  db: Conn,
  scope: string,
  values: { visibility?: 'public' | 'private'; organizationId?: string },
): Promise<void> {
  await db
    .insertInto('scope_settings')
    .values({
      scope,
      visibility: values.visibility ?? 'public',
      organization_id: values.organizationId ?? null,
    })
    .onConflict((oc) =>
      oc.column('scope').doUpdateSet({
        ...(values.visibility ? { visibility: values.visibility } : {}),
        ...(values.organizationId ? { organization_id: values.organizationId, account_id: null } : {}),
        updated_at: sql<Date>`now()`,
      }),
    )
    .execute();
}

export async function setPackageVisibility(
  db: Conn,
  scope: string,
  name: string,
  visibility: 'public' | 'private',
): Promise<{ visibility: 'public' | 'private'; private: boolean } | undefined> {
  return db
    .updateTable('packages')
    .set({ visibility })
    .where('scope', '=', scope)
    .where('name', '=', name)
    .returning(['visibility', 'private'])
    .executeTakeFirst();
}

export async function findPackageVisibility(
  db: Conn,
  scope: string,
  name: string,
): Promise<{ visibility: 'public' | 'private'; private: boolean } | undefined> {
  return db
    .selectFrom('packages')
    .select(['visibility', 'private'])
    .where('scope', '=', scope)
    .where('name', '=', name)
    .executeTakeFirst();
}

export async function listTrustedPublishers(db: Conn, scope: string, name: string | null) {
  let query = db.selectFrom('trusted_publishers').selectAll().where('scope', '=', scope);
  query = name === null ? query : query.where((eb) => eb.or([eb('name', 'is', null), eb('name', '=', name)]));
  return query.orderBy('created_at').execute();
}

export async function insertTrustedPublisher(
  db: Conn,
  values: {
    scope: string;
    name: string | null;
    issuer: string;
    repository: string;
    workflow: string | null;
    environment: string | null;
    createdBy: string;
  },
) {
  return db
    .insertInto('trusted_publishers')
    .values({
      scope: values.scope,
      name: values.name,
      issuer: values.issuer,
      repository: values.repository,
      workflow: values.workflow,
      environment: values.environment,
      created_by: values.createdBy,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function deleteTrustedPublisher(db: Conn, scope: string, id: string) {
  return db
    .deleteFrom('trusted_publishers')
    .where('scope', '=', scope)
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst();
}
