import { type Kysely, sql } from 'kysely';

// Frozen in time: never import app code here, never edit after it has shipped. Add a new file instead.
// Issue 29: allowing an app again clears `edge_delegations.revoked_at`, which must not bring its earlier
// tokens back (a stolen access token would work again until it expires). `tokens_not_before` is set by
// every revocation and never cleared: the edge refuses the app's tokens issued before it.

export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table edge_delegations add column tokens_not_before timestamptz`.execute(db);
  await sql`update edge_delegations set tokens_not_before = revoked_at where revoked_at is not null`.execute(db);
  await sql`create index edge_delegations_tokens_not_before_idx on edge_delegations (tokens_not_before)
    where tokens_not_before is not null`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table edge_delegations drop column tokens_not_before`.execute(db);
}
