import type { Db } from '@pkgreg/db';
import { sql } from 'kysely';
import { publicKeyBase64, type RegistrySigner, versionSignedText } from './signer.js';

// Registry signatures (issue 30; docs/provenance.md): every version, old ones included, carries the
// registry's Ed25519 signature over `@scope/name@version:integrity`. The signer runs beside the API (one
// process at a time, under an advisory lock) and signs what is not signed yet by the current key, in
// creation order; the backfill command is the same call until nothing is left. Every key that ever
// signed stays published, so a rotation leaves old signatures verifiable.

/** Advisory lock of the signing pass: one process signs at a time, the others skip their turn. */
const SIGNING_LOCK_KEY = 0x706b_7367; // "pksg"

type Trx = Parameters<Parameters<ReturnType<Db['transaction']>['execute']>[0]>[0];

/**
 * Runs `work` in a transaction holding the advisory lock `lockKey` (one process per pass; null when
 * another holds it), once the signer's key is known to be published and not retired: a retired key
 * signs nothing more, whatever it is asked to sign.
 */
export async function withCurrentKey<T>(
  db: Db,
  signer: RegistrySigner,
  lockKey: number,
  work: (trx: Trx) => Promise<T>,
): Promise<T | null> {
  return db.transaction().execute(async (trx) => {
    const lock = await sql<{ ok: boolean }>`select pg_try_advisory_xact_lock(${lockKey}) as ok`.execute(trx);
    if (!lock.rows[0]?.ok) return null;
    const key = await trx
      .selectFrom('registry_signing_keys')
      .select('expires_at')
      .where('keyid', '=', signer.keyId)
      .executeTakeFirst();
    if (!key) throw new Error(`signing key ${signer.keyId} is not published (registerSigningKey first)`);
    if (key.expires_at !== null && new Date(key.expires_at) <= new Date())
      throw new Error(`signing key ${signer.keyId} was retired: configure its successor`);
    return work(trx);
  });
}

/** Publishes the signer's public key (once; a key already known is left as it is). */
export async function registerSigningKey(db: Db, signer: RegistrySigner): Promise<void> {
  await db
    .insertInto('registry_signing_keys')
    .values({ keyid: signer.keyId, algorithm: 'ed25519', public_key: publicKeyBase64(signer.publicKey) })
    .onConflict((oc) => oc.column('keyid').doNothing())
    .execute();
}

/**
 * Signs up to `limit` versions the signer's key has not signed, oldest first; how many it signed, or
 * null when another process holds the signing lock. A version keeps signatures of older keys.
 */
export async function signPendingVersions(
  db: Db,
  signer: RegistrySigner,
  options: { limit?: number } = {},
): Promise<number | null> {
  const limit = options.limit ?? 500;
  return withCurrentKey(db, signer, SIGNING_LOCK_KEY, async (trx) => {
    const pending = await trx
      .selectFrom('package_versions as v')
      .innerJoin('packages as p', 'p.id', 'v.package_id')
      .select(['v.id', 'p.scope', 'p.name', 'v.version', 'v.integrity'])
      .where(({ not, exists, selectFrom }) =>
        not(
          exists(
            selectFrom('version_signatures as s')
              .select('s.version_id')
              .whereRef('s.version_id', '=', 'v.id')
              .where('s.keyid', '=', signer.keyId),
          ),
        ),
      )
      .orderBy('v.seq')
      .limit(limit)
      .execute();
    if (pending.length === 0) return 0;
    const rows = await Promise.all(
      pending.map(async (v) => ({
        version_id: v.id,
        keyid: signer.keyId,
        signature: (
          await signer.sign(Buffer.from(versionSignedText(v.scope, v.name, v.version, v.integrity)))
        ).toString('base64'),
      })),
    );
    await trx.insertInto('version_signatures').values(rows).execute();
    return rows.length;
  });
}

/** Signs every version the key has not signed yet (the backfill); how many it signed. */
export async function signAllVersions(db: Db, signer: RegistrySigner): Promise<number> {
  let total = 0;
  for (;;) {
    const signed = await signPendingVersions(db, signer, { limit: 1000 });
    if (signed === null) throw new Error('another process is signing versions now: try again shortly');
    if (signed === 0) return total;
    total += signed;
  }
}

/** A version's signatures as the API returns them, newest key first. */
export interface VersionSignature {
  keyid: string;
  sig: string;
}

/** The signatures of each version id (an id without any maps to an empty list). */
export async function signaturesOf(
  db: Db,
  versionIds: readonly string[],
): Promise<Map<string, VersionSignature[]>> {
  const found = new Map<string, VersionSignature[]>(versionIds.map((id) => [id, []]));
  if (versionIds.length === 0) return found;
  const rows = await db
    .selectFrom('version_signatures')
    .select(['version_id', 'keyid', 'signature'])
    .where('version_id', 'in', [...versionIds])
    .orderBy('created_at', 'desc')
    .execute();
  for (const row of rows) found.get(row.version_id)?.push({ keyid: row.keyid, sig: row.signature });
  return found;
}

/** A published key as npm's keys endpoint gives it (`/-/npm/v1/keys`). */
export interface PublishedKey {
  keyid: string;
  keytype: 'ed25519';
  scheme: 'ed25519';
  /** Base64 SPKI DER. */
  key: string;
  /** When it stopped being trusted for new signatures (ISO 8601); null while current. */
  expires: string | null;
}

/** Every key that ever signed, oldest first. */
export async function publishedKeys(db: Db): Promise<PublishedKey[]> {
  const rows = await db
    .selectFrom('registry_signing_keys')
    .select(['keyid', 'public_key', 'expires_at'])
    .orderBy('created_at')
    .orderBy('keyid')
    .execute();
  return rows.map((r) => ({
    keyid: r.keyid,
    keytype: 'ed25519',
    scheme: 'ed25519',
    key: r.public_key,
    expires: r.expires_at ? new Date(r.expires_at).toISOString() : null,
  }));
}

/**
 * Marks a key as no longer trusted for new signatures from `at` (a rotation: the new key signs from
 * then on); false when no such key is current. Its signatures made before `at` stay valid.
 */
export async function retireSigningKey(db: Db, keyid: string, at: Date = new Date()): Promise<boolean> {
  const result = await db
    .updateTable('registry_signing_keys')
    .set({ expires_at: at })
    .where('keyid', '=', keyid)
    .where('expires_at', 'is', null)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}
