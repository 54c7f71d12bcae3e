import type { Database } from '@pkgreg/db';
import type { Kysely, Selectable } from 'kysely';

// The accounts audit log (docs/accounts.md, "Audit log"): every change of membership, role,
// visibility or token, written in the transaction of the change where there is one.

type Conn = Kysely<Database>;
export type AuditEventRow = Selectable<Database['account_audit_events']>;

export interface AuditEvent {
  actorId: string | null;
  organizationId?: string | null;
  action: string;
  target?: string | null;
  details?: Record<string, unknown>;
  requestId?: string | null;
}

export async function recordAuditEvent(db: Conn, event: AuditEvent): Promise<void> {
  await db
    .insertInto('account_audit_events')
    .values({
      actor_id: event.actorId,
      organization_id: event.organizationId ?? null,
      action: event.action,
      target: event.target ?? null,
      details: JSON.stringify(event.details ?? {}),
      request_id: event.requestId ?? null,
    })
    .execute();
}

/** An organisation's events, newest first, before `beforeId` when paging. */
export async function listOrganizationAudit(
  db: Conn,
  organizationId: string,
  options: { limit: number; beforeId?: number },
): Promise<AuditEventRow[]> {
  let query = db
    .selectFrom('account_audit_events')
    .selectAll()
    .where('organization_id', '=', organizationId)
    .orderBy('id', 'desc')
    .limit(options.limit);
  if (options.beforeId !== undefined) query = query.where('id', '<', options.beforeId);
  return query.execute();
}

/** An account's own events (its tokens, its sign-ins' sessions), newest first. */
export async function listAccountAudit(db: Conn, accountId: string, limit: number): Promise<AuditEventRow[]> {
  return db
    .selectFrom('account_audit_events')
    .selectAll()
    .where('actor_id', '=', accountId)
    .where('organization_id', 'is', null)
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
}
