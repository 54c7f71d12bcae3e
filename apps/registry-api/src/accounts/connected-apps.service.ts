import { recordAuditEvent } from '@pkgreg/accounts';
import type { ConnectedApp } from '@pkgreg/contracts';
import type { Db } from '@pkgreg/db';
import {
  deleteDelegatedArtifacts,
  listLiveDelegations,
  revokeDelegation,
} from './connected-apps.repository.js';

// Connected apps (docs/accounts.md): the MCP clients a person allowed to use the edge as them, and
// revoking one, which the edge sees at once (edge_access_version) and which leaves the app nothing to
// refresh with (its codes, refresh tokens and grant are deleted).

export async function listConnectedApps(db: Db, accountId: string): Promise<ConnectedApp[]> {
  const rows = await listLiveDelegations(db, accountId);
  return rows.map((row) => ({
    clientId: row.client_id,
    clientName: row.client_name,
    scopes: row.scopes,
    createdAt: row.created_at.toISOString(),
    lastUsedAt: row.last_used_at?.toISOString() ?? null,
  }));
}

/** Revokes the account's live app in one transaction; false when it has none by that client id. */
export async function revokeConnectedApp(
  db: Db,
  input: { accountId: string; clientId: string; requestId?: string },
): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const revoked = await revokeDelegation(trx, input.accountId, input.clientId);
    if (!revoked) return false;
    await deleteDelegatedArtifacts(trx, {
      accountId: input.accountId,
      clientId: input.clientId,
      grantId: revoked.grant_id,
    });
    await recordAuditEvent(trx, {
      actorId: input.accountId,
      action: 'connected-app.revoke',
      target: input.clientId,
      requestId: input.requestId,
    });
    return true;
  });
}
