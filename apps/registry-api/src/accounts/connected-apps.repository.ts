import type { Db } from '@pkgreg/db';
import { sql } from 'kysely';

// SQL of connected apps (docs/accounts.md, "Connected apps"): edge_delegations, what a person allowed an
// app, and the edge's oidc-provider artifacts a revocation deletes. The registry never writes those
// artifacts' payloads; it only deletes them by account, client and grant. Each change of
// edge_delegations bumps edge_access_version (a trigger), so edges refuse a revoked app's tokens at once.

export interface DelegationRow {
  client_id: string;
  client_name: string | null;
  scopes: string[];
  created_at: Date;
  last_used_at: Date | null;
}

/** Whether the account's live delegation to the client already holds every one of `scopes`. */
export async function delegationCovers(
  db: Db,
  accountId: string,
  clientId: string,
  scopes: readonly string[],
): Promise<boolean> {
  const row = await db
    .selectFrom('edge_delegations')
    .select('client_id')
    .where('account_id', '=', accountId)
    .where('client_id', '=', clientId)
    .where('revoked_at', 'is', null)
    .where(sql<boolean>`scopes @> ${[...scopes]}::text[]`)
    .executeTakeFirst();
  return row !== undefined;
}

/**
 * Records an allow: a live delegation gains the scopes (their union) and keeps its grant and dates; an
 * absent or revoked one starts afresh with just these scopes and no grant (the edge writes the new one).
 */
export async function allowDelegation(
  db: Db,
  allowed: { accountId: string; clientId: string; clientName: string | null; scopes: readonly string[] },
): Promise<void> {
  const live = sql<boolean>`edge_delegations.revoked_at is null`;
  await db
    .insertInto('edge_delegations')
    .values({
      account_id: allowed.accountId,
      client_id: allowed.clientId,
      client_name: allowed.clientName,
      scopes: [...allowed.scopes],
    })
    .onConflict((oc) =>
      oc.columns(['account_id', 'client_id']).doUpdateSet({
        client_name: (eb) => eb.ref('excluded.client_name'),
        scopes: sql<string[]>`case when ${live}
          then array(select distinct s from unnest(edge_delegations.scopes || excluded.scopes) s order by s)
          else excluded.scopes end`,
        grant_id: sql<string | null>`case when ${live} then edge_delegations.grant_id end`,
        created_at: sql<Date>`case when ${live} then edge_delegations.created_at else now() end`,
        last_used_at: sql<Date | null>`case when ${live} then edge_delegations.last_used_at end`,
        revoked_at: null,
      }),
    )
    .execute();
}

/** The account's live delegations, newest first. */
export async function listLiveDelegations(db: Db, accountId: string): Promise<DelegationRow[]> {
  return db
    .selectFrom('edge_delegations')
    .select(['client_id', 'client_name', 'scopes', 'created_at', 'last_used_at'])
    .where('account_id', '=', accountId)
    .where('revoked_at', 'is', null)
    .orderBy('created_at', 'desc')
    .orderBy('client_id')
    .execute();
}

/** Revokes the account's live delegation to the client; its grant id, or undefined when there was none. */
export async function revokeDelegation(
  db: Db,
  accountId: string,
  clientId: string,
): Promise<{ grant_id: string | null } | undefined> {
  return db
    .updateTable('edge_delegations')
    .set({ revoked_at: sql<Date>`now()`, tokens_not_before: sql<Date>`now()` })
    .where('account_id', '=', accountId)
    .where('client_id', '=', clientId)
    .where('revoked_at', 'is', null)
    .returning('grant_id')
    .executeTakeFirst();
}

/** Deletes the edge's artifacts (codes, refresh tokens, the grant) of the account's use of the client. */
export async function deleteDelegatedArtifacts(
  db: Db,
  of: { accountId: string; clientId: string; grantId: string | null },
): Promise<void> {
  await db
    .deleteFrom('edge_oauth_artifacts')
    .where((eb) =>
      eb.or([
        eb.and([eb('account_id', '=', of.accountId), eb('client_id', '=', of.clientId)]),
        ...(of.grantId === null ? [] : [eb('grant_id', '=', of.grantId)]),
      ]),
    )
    .execute();
}
