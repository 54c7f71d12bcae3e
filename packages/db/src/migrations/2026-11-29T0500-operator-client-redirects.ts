import { type Kysely, sql } from 'kysely';

// Frozen in time: never import app code here, never edit after it has shipped. Add a new file instead.
// Issue 29: a client the operator registers may also sign people in through the authorization code flow
// (Cursor's static client id and secret): the addresses it may be sent back to. Empty (every existing
// client): client_credentials only, as before.

export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table oauth_clients add column redirect_uris text[] not null default '{}'`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table oauth_clients drop column redirect_uris`.execute(db);
}
