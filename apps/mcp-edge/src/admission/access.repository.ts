import { type Db, queryNamed } from '@pkgreg/db';
import { sql } from 'kysely';

// SQL of who may call (issue 26): grants of hosted tenants and tunnel sessions to clients, disabled
// clients, and the version every change of either bumps (by trigger, migration 2026-11-28T1430).

export type GrantedMode = 'hosted' | 'local_tunnel';

export interface AccessRows {
  version: number;
  disabledClients: string[];
  grants: Array<{ backend_mode: GrantedMode; backend_id: string; namespace: string }>;
  /** Apps people revoked recently enough that tokens issued before still live (issue 29). */
  revokedDelegations: Array<{ account_id: string; client_id: string; revoked_at: Date }>;
  /**
   * The people each owned tenant or session serves (issue 29): its owner, or every member of its
   * organisation while the organisation is not suspended.
   */
  owners: Array<{ backend_mode: GrantedMode; backend_id: string; account_id: string }>;
}

/**
 * The version alone, read about once a millisecond by a busy edge (access.ts): a named statement, so each
 * connection parses and plans it once.
 */
export async function readAccessVersion(db: Db): Promise<number> {
  const [row] = await queryNamed<{ version: number }>(
    db,
    'pkgreg_edge_access_version',
    'select version from edge_access_version',
    [],
  );
  if (!row) throw new Error('edge_access_version has no row (migration 2026-11-28T1430)');
  return Number(row.version);
}

/**
 * Everything, as of one snapshot: the version read in the same transaction as what it versions.
 * Revocations older than `tokenTtlSeconds` are left out: every token issued before them has expired.
 */
export function readAccessRows(db: Db, tokenTtlSeconds: number): Promise<AccessRows> {
  return db
    .transaction()
    .setIsolationLevel('repeatable read')
    .setAccessMode('read only')
    .execute(async (trx) => {
      const { version } = await trx
        .selectFrom('edge_access_version')
        .select('version')
        .executeTakeFirstOrThrow();
      const disabled = await trx
        .selectFrom('oauth_clients')
        .select('client_id')
        .where('disabled_at', 'is not', null)
        .execute();
      const grants = await trx
        .selectFrom('edge_backend_clients')
        .select(['backend_mode', 'backend_id', 'namespace'])
        .execute();
      // tokens_not_before, not revoked_at: allowing the app again clears the one, never the other.
      const revokedDelegations = await trx
        .selectFrom('edge_delegations')
        .select(['account_id', 'client_id', 'tokens_not_before as revoked_at'])
        .where('tokens_not_before', '>', sql<Date>`now() - make_interval(secs => ${tokenTtlSeconds})`)
        .execute();
      const owners = await sql<{ backend_mode: GrantedMode; backend_id: string; account_id: string }>`
        select o.backend_mode, o.backend_id, o.account_id from edge_backend_owners o
        where o.account_id is not null
        union all
        select o.backend_mode, o.backend_id, m."userId" from edge_backend_owners o
        join auth_organization g on g."id" = o.organization_id and g."suspendedAt" is null
        join auth_member m on m."organizationId" = g."id"`.execute(trx);
      return {
        version,
        owners: owners.rows,
        disabledClients: disabled.map((r) => r.client_id),
        grants,
        revokedDelegations: revokedDelegations.map((r) => ({ ...r, revoked_at: r.revoked_at as Date })),
      };
    });
}

export async function insertGrant(
  db: Db,
  grant: { mode: GrantedMode; backendId: string; namespace: string; clientId: string | null },
): Promise<boolean> {
  const row = await db
    .insertInto('edge_backend_clients')
    .values({
      backend_mode: grant.mode,
      backend_id: grant.backendId,
      namespace: grant.namespace,
      client_id: grant.clientId,
    })
    .onConflict((oc) => oc.columns(['backend_mode', 'backend_id', 'namespace']).doNothing())
    .returning('namespace')
    .executeTakeFirst();
  return row !== undefined;
}

export async function deleteGrant(
  db: Db,
  grant: { mode: GrantedMode; backendId: string; namespace: string },
): Promise<boolean> {
  const result = await db
    .deleteFrom('edge_backend_clients')
    .where('backend_mode', '=', grant.mode)
    .where('backend_id', '=', grant.backendId)
    .where('namespace', '=', grant.namespace)
    .executeTakeFirst();
  return result.numDeletedRows > 0n;
}

export function listGrants(db: Db, backend: { mode: GrantedMode; backendId: string }) {
  return db
    .selectFrom('edge_backend_clients')
    .select(['namespace', 'client_id', 'created_at'])
    .where('backend_mode', '=', backend.mode)
    .where('backend_id', '=', backend.backendId)
    .orderBy('created_at')
    .execute();
}

/** Makes a person or an organisation the owner of a tenant or session (replacing any owner it had). */
export async function setOwner(
  db: Db,
  owner: { mode: GrantedMode; backendId: string; accountId?: string; organizationId?: string },
): Promise<void> {
  const values = {
    backend_mode: owner.mode,
    backend_id: owner.backendId,
    account_id: owner.accountId ?? null,
    organization_id: owner.organizationId ?? null,
  };
  await db
    .insertInto('edge_backend_owners')
    .values(values)
    .onConflict((oc) =>
      oc.columns(['backend_mode', 'backend_id']).doUpdateSet({
        account_id: values.account_id,
        organization_id: values.organization_id,
      }),
    )
    .execute();
}

/** Leaves a tenant or session without an owner: it serves only the clients it names. */
export async function removeOwner(db: Db, mode: GrantedMode, backendId: string): Promise<boolean> {
  const result = await db
    .deleteFrom('edge_backend_owners')
    .where('backend_mode', '=', mode)
    .where('backend_id', '=', backendId)
    .executeTakeFirst();
  return result.numDeletedRows > 0n;
}
