import { NAMESPACE_PATTERN } from '@pkgreg/contracts';
import type { Db } from '@pkgreg/db';
import { findClient } from '../oauth/clients.repository.js';
import { clientNamespace } from './access.js';
import { deleteGrant, type GrantedMode, insertGrant, listGrants } from './access.repository.js';

// The operator's side of who may call (`pnpm edge tenants:allow|revoke|clients`, `tunnels:…`): grants are
// rows, so they take effect on every running edge at its next request (access.ts), without a restart.

export class UnknownClientError extends Error {}

export interface GrantTarget {
  mode: GrantedMode;
  /** The tenant, or the tunnel session id. */
  backendId: string;
}

/**
 * A client a setting or a command names, as a namespace: a client id of the edge's own authorization
 * server (it must exist), or a namespace (`app:…`, a client of a trusted issuer, taken as given).
 */
export async function resolveClient(
  db: Db,
  issuer: string,
  entry: string,
): Promise<{ namespace: string; clientId: string | null }> {
  if (NAMESPACE_PATTERN.test(entry)) return { namespace: entry, clientId: null };
  if (!(await findClient(db, entry))) throw new UnknownClientError(`no client ${entry}`);
  return { namespace: clientNamespace(issuer, entry), clientId: entry };
}

/** Lets the client use the tenant or session; false when it already could. */
export async function allowClient(db: Db, issuer: string, target: GrantTarget, entry: string) {
  const client = await resolveClient(db, issuer, entry);
  return insertGrant(db, { mode: target.mode, backendId: target.backendId, ...client });
}

/** Stops the client using the tenant or session (a client its seeded setting names stays allowed). */
export function revokeClient(db: Db, issuer: string, target: GrantTarget, entry: string) {
  return deleteGrant(db, { ...target, namespace: clientNamespace(issuer, entry) });
}

export { listGrants };
