import type { Database, Db } from '@pkgreg/db';
import { type Selectable, sql } from 'kysely';

// SQL of the consent hand-off (docs/accounts.md, "Consent for MCP clients"): the edge inserts a row of
// edge_consent_requests and consumes it; the registry claims it for the signed-in account and records
// the decision. A row is usable while undecided, unconsumed and unexpired; every write here is one
// conditional update, so two browsers racing on one row cannot both win.

const SHOWN = [
  'interaction_uid',
  'client_id',
  'client_kind',
  'client_name',
  'client_uri',
  'logo_uri',
  'redirect_host',
  'resource',
  'scopes',
] as const;

/** What the consent page shows of a request, and what a decision needs. */
export type ConsentRequest = Pick<Selectable<Database['edge_consent_requests']>, (typeof SHOWN)[number]>;

/**
 * Claims the usable request `idHash` for the account (or finds it claimed by it already); undefined
 * when it is unknown, expired, decided, consumed or claimed by another account.
 */
export async function claimConsentRequest(
  db: Db,
  idHash: string,
  accountId: string,
): Promise<ConsentRequest | undefined> {
  return db
    .updateTable('edge_consent_requests')
    .set({ account_id: accountId })
    .where('id_hash', '=', idHash)
    .where((eb) => eb.or([eb('account_id', 'is', null), eb('account_id', '=', accountId)]))
    .where('decision', 'is', null)
    .where('consumed_at', 'is', null)
    .where('expires_at', '>', sql<Date>`now()`)
    .returning(SHOWN)
    .executeTakeFirst();
}

/**
 * Records the account's decision on its usable request, with the hash of the code the edge will be
 * shown; undefined when there is no such request (decided already, expired, another account's).
 */
export async function decideConsentRequest(
  db: Db,
  decision: { idHash: string; accountId: string; decision: 'allow' | 'deny'; codeHash: string },
): Promise<ConsentRequest | undefined> {
  return db
    .updateTable('edge_consent_requests')
    .set({
      decision: decision.decision,
      decided_at: sql<Date>`now()`,
      decision_code_hash: decision.codeHash,
    })
    .where('id_hash', '=', decision.idHash)
    .where('account_id', '=', decision.accountId)
    .where('decision', 'is', null)
    .where('consumed_at', 'is', null)
    .where('expires_at', '>', sql<Date>`now()`)
    .returning(SHOWN)
    .executeTakeFirst();
}
