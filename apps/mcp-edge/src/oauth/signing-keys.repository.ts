import type { Db } from '@pkgreg/db';
import { sql } from 'kysely';

// The edge's signing keys, one table per purpose: `access` (oauth_signing_keys) signs access tokens and
// is published in the JWKS; `delegation` (edge_delegation_keys) signs the assertions a person's reads
// carry to the registry (docs/decisions.md, "Delegation keys"). A key of one purpose is never looked up
// for the other. `retired_at` on a retiring key is the moment the last thing it signed expires: until
// then it stays published so what was signed before a rotation keeps verifying.

export type KeyPurpose = 'access' | 'delegation';

const TABLES = { access: 'oauth_signing_keys', delegation: 'edge_delegation_keys' } as const;

/** The table holding the keys of `purpose`. */
export function keyTable(purpose: KeyPurpose): (typeof TABLES)[KeyPurpose] {
  return TABLES[purpose];
}

export function listPublishedKeys(db: Db, purpose: KeyPurpose) {
  return db
    .selectFrom(keyTable(purpose))
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

export function listAllKeys(db: Db, purpose: KeyPurpose) {
  return db
    .selectFrom(keyTable(purpose))
    .select(['kid', 'alg', 'status', 'created_at', 'retired_at'])
    .orderBy('created_at', 'desc')
    .execute();
}

export function insertKey(
  db: Db,
  purpose: KeyPurpose,
  key: { kid: string; alg: string; publicJwk: Record<string, unknown>; privateJwk: Record<string, unknown> },
) {
  return db
    .insertInto(keyTable(purpose))
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
export function retireActiveKeysExcept(db: Db, purpose: KeyPurpose, keepKid: string, retireAt: Date) {
  return db
    .updateTable(keyTable(purpose))
    .set({ status: 'retiring', retired_at: retireAt })
    .where('status', '=', 'active')
    .where('kid', '<>', keepKid)
    .execute();
}

/** Retiring keys whose signatures have all expired become retired (no longer published). */
export function retireExpiredKeys(db: Db, purpose: KeyPurpose) {
  return db
    .updateTable(keyTable(purpose))
    .set({ status: 'retired' })
    .where('status', '=', 'retiring')
    .where('retired_at', '<=', sql<Date>`now()`)
    .execute();
}

/** Whether a key of `purpose` is active. */
export async function hasActiveKey(db: Db, purpose: KeyPurpose): Promise<boolean> {
  const row = await db
    .selectFrom(keyTable(purpose))
    .select('kid')
    .where('status', '=', 'active')
    .executeTakeFirst();
  return row !== undefined;
}
