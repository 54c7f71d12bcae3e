import type { Db } from '@pkgreg/db';
import { sql } from 'kysely';

// oauth_signing_keys rows. `retired_at` on a retiring key is the moment its last token expires:
// until then it stays in the JWKS so tokens signed before a rotation keep verifying.

export function listPublishedKeys(db: Db) {
  return db
    .selectFrom('oauth_signing_keys')
    .selectAll()
    .where((eb) =>
      eb.or([
        eb('status', '=', 'active'),
        eb.and([eb('status', '=', 'retiring'), eb('retired_at', '>', sql<Date>`now()`)]),
      ]),
    )
    .orderBy('created_at', 'desc')
    .execute();
}

export function listAllKeys(db: Db) {
  return db
    .selectFrom('oauth_signing_keys')
    .select(['kid', 'alg', 'status', 'created_at', 'retired_at'])
    .orderBy('created_at', 'desc')
    .execute();
}

export function insertKey(
  db: Db,
  key: { kid: string; alg: string; publicJwk: Record<string, unknown>; privateJwk: Record<string, unknown> },
) {
  return db
    .insertInto('oauth_signing_keys')
    .values({
      kid: key.kid,
      alg: key.alg,
      public_jwk: JSON.stringify(key.publicJwk),
      private_jwk: JSON.stringify(key.privateJwk),
      status: 'active',
    })
    .execute();
}

/** Demotes every active key other than `keepKid` to retiring until `retireAt`. */
export function retireActiveKeysExcept(db: Db, keepKid: string, retireAt: Date) {
  return db
    .updateTable('oauth_signing_keys')
    .set({ status: 'retiring', retired_at: retireAt })
    .where('status', '=', 'active')
    .where('kid', '<>', keepKid)
    .execute();
}

/** Retiring keys whose tokens have all expired become retired (no longer published). */
export function retireExpiredKeys(db: Db) {
  return db
    .updateTable('oauth_signing_keys')
    .set({ status: 'retired' })
    .where('status', '=', 'retiring')
    .where('retired_at', '<=', sql<Date>`now()`)
    .execute();
}
