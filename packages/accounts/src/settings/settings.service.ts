import type { Database } from '@pkgreg/db';
import { lockDependencyGraph, refreshDependencyState, withDependencyRefresh } from '@pkgreg/registry';
import type { Kysely } from 'kysely';
import { memberRole } from '../access/access.repository.js';
import { atLeast } from '../access/roles.js';
import { recordAuditEvent } from '../audit/audit.repository.js';
import {
  findScopeSettings,
  type ScopeSettingsRow,
  setPackageVisibility,
  upsertScopeSettings,
} from './settings.repository.js';

// Changing who sees a scope or a package, and which organisation a scope belongs to; each change is
// written to the audit log in the same transaction (of the scope's organisation, when it has one).

type Conn = Kysely<Database>;

export class SettingsError extends Error {
  constructor(
    readonly kind: 'forbidden' | 'not_found',
    message: string,
  ) {
    super(message);
  }
}

export interface Actor {
  accountId: string;
  requestId?: string;
}

export async function changeScopeSettings(
  db: Conn,
  scope: string,
  change: { visibility?: 'public' | 'private'; organizationId?: string },
  actor: Actor,
): Promise<ScopeSettingsRow> {
  return db.transaction().execute(async (trx) => {
    // Before any package row is locked, as every writer of the dependency graph takes it.
    if (change.visibility !== undefined) await lockDependencyGraph(trx);
    const before = await findScopeSettings(trx, scope);
    if (change.organizationId !== undefined && change.organizationId !== before?.organization_id) {
      const role = await memberRole(trx, change.organizationId, actor.accountId);
      if (!role || !atLeast(role, 'admin')) {
        throw new SettingsError('forbidden', 'You must be an admin of the organisation the scope moves into');
      }
    }
    await upsertScopeSettings(trx, scope, change);
    const after = (await findScopeSettings(trx, scope)) as ScopeSettingsRow;
    if (change.visibility !== undefined && change.visibility !== (before?.visibility ?? 'public')) {
      // Dependant counts and dependants' details count only what their readers may see.
      const ids = (await trx.selectFrom('packages').select('id').where('scope', '=', scope).execute()).map(
        (r) => r.id,
      );
      await refreshDependencyState(trx, { packageIds: ids, changedIds: ids });
      await recordAuditEvent(trx, {
        actorId: actor.accountId,
        organizationId: after.organization_id,
        action: 'scope.visibility',
        target: scope,
        details: { from: before?.visibility ?? 'public', to: change.visibility },
        requestId: actor.requestId,
      });
    }
    if (change.organizationId !== undefined && change.organizationId !== before?.organization_id) {
      await recordAuditEvent(trx, {
        actorId: actor.accountId,
        organizationId: change.organizationId,
        action: 'scope.move',
        target: scope,
        details: { from: before?.organization_id ?? null },
        requestId: actor.requestId,
      });
    }
    return after;
  });
}

export async function changePackageVisibility(
  db: Conn,
  scope: string,
  name: string,
  visibility: 'public' | 'private',
  actor: Actor,
): Promise<{ visibility: 'public' | 'private'; private: boolean }> {
  // withDependencyRefresh: the dependant counts of what it depends on count only public dependants.
  return withDependencyRefresh(db, { scope, name }, async (trx) => {
    const changed = await setPackageVisibility(trx, scope, name, visibility);
    if (!changed) throw new SettingsError('not_found', 'Package not found');
    const settings = await findScopeSettings(trx, scope);
    await recordAuditEvent(trx, {
      actorId: actor.accountId,
      organizationId: settings?.organization_id ?? null,
      action: 'package.visibility',
      target: `${scope}/${name}`,
      details: { to: visibility },
      requestId: actor.requestId,
    });
    return changed;
  });
}
