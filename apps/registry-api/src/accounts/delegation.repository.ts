import type { Db } from '@pkgreg/db';
import { sql } from 'kysely';

// What a delegation assertion of the MCP edge is checked against (delegation-assertion.ts): the edge's
// published delegation keys (the table it rotates them in; never its access tokens' keys, so an access
// token, or anything else signed with those, is no assertion here) and the person's delegation to the app.

/** The edge's delegation keys that verify: active, and retiring ones until their last assertion expired. */
export function listEdgeDelegationKeys(db: Db) {
  return db
    .selectFrom('edge_delegation_keys')
    .select(['kid', 'alg', 'public_jwk'])
    .where((eb) =>
      eb.or([
        eb('status', '=', 'active'),
        eb.and([eb('status', '=', 'retiring'), eb('retired_at', '>', sql<Date>`now()`)]),
      ]),
    )
    .execute();
}

/**
 * Whether `accountId` allows `clientId` now (its connected app, not revoked) and the account is not
 * suspended (a ban whose end has passed no longer counts).
 */
export async function isDelegationLive(db: Db, accountId: string, clientId: string): Promise<boolean> {
  const row = await db
    .selectFrom('edge_delegations')
    .innerJoin('auth_user', 'auth_user.id', 'edge_delegations.account_id')
    .select('edge_delegations.account_id')
    .where('edge_delegations.account_id', '=', accountId)
    .where('edge_delegations.client_id', '=', clientId)
    .where('edge_delegations.revoked_at', 'is', null)
    .where((eb) =>
      eb.or([
        eb('auth_user.banned', 'is not', true),
        eb.and([
          eb('auth_user.banExpires', 'is not', null),
          eb('auth_user.banExpires', '<', sql<Date>`now()`),
        ]),
      ]),
    )
    .executeTakeFirst();
  return row !== undefined;
}
