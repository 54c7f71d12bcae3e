import type { Db } from '@pkgreg/db';
import { sql } from 'kysely';

export function insertClient(
  db: Db,
  client: {
    clientId: string;
    secretHash: string;
    name: string;
    allowedScopes: string[];
    redirectUris?: string[];
  },
) {
  return db
    .insertInto('oauth_clients')
    .values({
      client_id: client.clientId,
      client_secret_hash: client.secretHash,
      name: client.name,
      allowed_scopes: client.allowedScopes,
      redirect_uris: client.redirectUris ?? [],
    })
    .returning(['client_id', 'name', 'allowed_scopes', 'redirect_uris', 'created_at'])
    .executeTakeFirstOrThrow();
}

export function findClient(db: Db, clientId: string) {
  return db.selectFrom('oauth_clients').selectAll().where('client_id', '=', clientId).executeTakeFirst();
}

export function listClients(db: Db) {
  return db
    .selectFrom('oauth_clients')
    .select(['client_id', 'name', 'allowed_scopes', 'redirect_uris', 'created_at', 'disabled_at'])
    .orderBy('created_at')
    .execute();
}

export async function disableClient(db: Db, clientId: string): Promise<boolean> {
  const result = await db
    .updateTable('oauth_clients')
    .set({ disabled_at: sql<Date>`now()` })
    .where('client_id', '=', clientId)
    .where('disabled_at', 'is', null)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

export function findEnabledClientByName(db: Db, name: string) {
  return db
    .selectFrom('oauth_clients')
    .select(['client_id', 'allowed_scopes'])
    .where('name', '=', name)
    .where('disabled_at', 'is', null)
    .orderBy('created_at')
    .executeTakeFirst();
}

export function updateClient(
  db: Db,
  clientId: string,
  change: { secretHash: string; allowedScopes: string[] },
) {
  return db
    .updateTable('oauth_clients')
    .set({ client_secret_hash: change.secretHash, allowed_scopes: change.allowedScopes })
    .where('client_id', '=', clientId)
    .execute();
}
