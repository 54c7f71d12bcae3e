import { randomUUID } from 'node:crypto';
import type { Database } from '@pkgreg/db';
import { type Kysely, sql } from 'kysely';
import { recordAuditEvent } from '../audit/audit.repository.js';
import { DEV_ACCOUNT_DOMAIN } from '../auth/dev-sign-in.js';

// What the operator does from `pnpm registry` (docs/accounts.md, "Operators"): name site
// administrators, suspend an account or an organisation, take over an organisation, and the demo
// account, organisation and private scope `npm run dev` starts with. Each change is audited with the
// actor `operator`.

type Conn = Kysely<Database>;

export class OperatorError extends Error {}

const OPERATOR = 'operator';

async function accountByEmail(db: Conn, email: string) {
  const row = await db
    .selectFrom('auth_user')
    .select(['id', 'email', 'role', 'banned'])
    .where(sql`lower("email")`, '=', email.toLowerCase())
    .executeTakeFirst();
  if (!row) throw new OperatorError(`No account with the email ${email}`);
  return row;
}

async function organizationBySlug(db: Conn, slug: string) {
  const row = await db
    .selectFrom('auth_organization')
    .select(['id', 'slug', 'suspendedAt'])
    .where('slug', '=', slug)
    .executeTakeFirst();
  if (!row) throw new OperatorError(`No organisation ${slug}`);
  return row;
}

export async function setSiteAdmin(db: Conn, email: string, admin: boolean): Promise<void> {
  await db.transaction().execute(async (trx) => {
    const account = await accountByEmail(trx, email);
    await trx
      .updateTable('auth_user')
      .set({ role: admin ? 'admin' : null })
      .where('id', '=', account.id)
      .execute();
    await recordAuditEvent(trx, {
      actorId: OPERATOR,
      action: admin ? 'account.site-admin' : 'account.site-admin-revoke',
      target: account.id,
    });
  });
}

/** Suspends an account: its sessions end and its tokens are refused until lifted. */
export async function suspendAccount(db: Conn, email: string, reason: string): Promise<void> {
  await db.transaction().execute(async (trx) => {
    const account = await accountByEmail(trx, email);
    await trx
      .updateTable('auth_user')
      .set({ banned: true, banReason: reason })
      .where('id', '=', account.id)
      .execute();
    await trx.deleteFrom('auth_session').where('userId', '=', account.id).execute();
    await recordAuditEvent(trx, {
      actorId: OPERATOR,
      action: 'account.suspend',
      target: account.id,
      details: { reason },
    });
  });
}

export async function unsuspendAccount(db: Conn, email: string): Promise<void> {
  await db.transaction().execute(async (trx) => {
    const account = await accountByEmail(trx, email);
    await trx
      .updateTable('auth_user')
      .set({ banned: false, banReason: null })
      .where('id', '=', account.id)
      .execute();
    await recordAuditEvent(trx, { actorId: OPERATOR, action: 'account.unsuspend', target: account.id });
  });
}

/** Suspends an organisation: its members reach nothing through it until lifted. */
export async function setOrganizationSuspended(
  db: Conn,
  slug: string,
  suspended: boolean,
  reason?: string,
): Promise<void> {
  await db.transaction().execute(async (trx) => {
    const org = await organizationBySlug(trx, slug);
    await trx
      .updateTable('auth_organization')
      .set({ suspendedAt: suspended ? sql<Date>`now()` : null })
      .where('id', '=', org.id)
      .execute();
    await recordAuditEvent(trx, {
      actorId: OPERATOR,
      organizationId: org.id,
      action: suspended ? 'organization.suspend' : 'organization.unsuspend',
      target: org.slug,
      details: reason ? { reason } : {},
    });
  });
}

/** Makes an account an owner of an organisation (its owners left the company, say); the operator or a site administrator. */
export async function takeOverOrganization(
  db: Conn,
  slug: string,
  email: string,
  reason: string,
  actorId: string = OPERATOR,
): Promise<void> {
  await db.transaction().execute(async (trx) => {
    const org = await organizationBySlug(trx, slug);
    const account = await accountByEmail(trx, email);
    await trx
      .insertInto('auth_member')
      .values({
        id: randomUUID(),
        organizationId: org.id,
        userId: account.id,
        role: 'owner',
        createdAt: new Date(),
      })
      .onConflict((oc) => oc.columns(['organizationId', 'userId']).doUpdateSet({ role: 'owner' }))
      .execute();
    await recordAuditEvent(trx, {
      actorId,
      organizationId: org.id,
      action: 'organization.take-over',
      target: account.id,
      details: { reason, email: account.email },
    });
  });
}

export interface DemoAccounts {
  email: string;
  organization: string;
  privateScope: string;
}

/**
 * The demo data's people (idempotent): the development account `developer`, the organisation
 * `demo-team` it owns, and that organisation's private scope `demo-team`, set before the demo
 * repositories are indexed so its skills are private from their first row.
 */
export async function seedDemoAccounts(db: Conn): Promise<DemoAccounts> {
  const email = `developer@${DEV_ACCOUNT_DOMAIN}`;
  const slug = 'demo-team';
  await db.transaction().execute(async (trx) => {
    await trx
      .insertInto('auth_user')
      .values({ id: randomUUID(), name: 'developer', email, emailVerified: true, updatedAt: new Date() })
      .onConflict((oc) => oc.column('email').doNothing())
      .execute();
    const account = await accountByEmail(trx, email);
    await trx
      .insertInto('auth_organization')
      .values({ id: randomUUID(), name: 'Demo team', slug, createdAt: new Date() })
      .onConflict((oc) => oc.column('slug').doNothing())
      .execute();
    const org = await organizationBySlug(trx, slug);
    await trx
      .insertInto('auth_member')
      .values({
        id: randomUUID(),
        organizationId: org.id,
        userId: account.id,
        role: 'owner',
        createdAt: new Date(),
      })
      .onConflict((oc) => oc.columns(['organizationId', 'userId']).doNothing())
      .execute();
    await trx
      .insertInto('scope_settings')
      .values({ scope: slug, organization_id: org.id, visibility: 'private' })
      .onConflict((oc) => oc.column('scope').doNothing())
      .execute();
  });
  return { email, organization: slug, privateScope: slug };
}
