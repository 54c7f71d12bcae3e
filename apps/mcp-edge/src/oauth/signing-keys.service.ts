import { randomBytes } from 'node:crypto';
import type { Db } from '@pkgreg/db';
import { type CryptoKey, exportJWK, generateKeyPair, importJWK, type JSONWebKeySet, type JWK } from 'jose';
import { sql } from 'kysely';
import {
  hasActiveKey,
  insertKey,
  type KeyPurpose,
  keyTable,
  listAllKeys,
  listPublishedKeys,
  retireActiveKeysExcept,
  retireExpiredKeys,
} from './signing-keys.repository.js';

export type { KeyPurpose };

export const SIGNING_ALG = 'ES256';
/** Clock skew allowed on top of a signature's lifetime before its key leaves the published keys. */
const RETIRE_GRACE_SECONDS = 60;
const keysLock = (purpose: KeyPurpose) => `pkgreg:${keyTable(purpose)}`;

async function newKey(db: Db, purpose: KeyPurpose): Promise<string> {
  const { publicKey, privateKey } = await generateKeyPair(SIGNING_ALG, { extractable: true });
  const kid = randomBytes(12).toString('base64url');
  const publicJwk = { ...(await exportJWK(publicKey)), kid, alg: SIGNING_ALG, use: 'sig' };
  const privateJwk = { ...(await exportJWK(privateKey)), kid, alg: SIGNING_ALG };
  await insertKey(db, purpose, { kid, alg: SIGNING_ALG, publicJwk, privateJwk });
  return kid;
}

/** Creates the first key of `purpose` when none is active. Safe when several edges start at once. */
export async function ensureActiveKey(db: Db, purpose: KeyPurpose = 'access'): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await sql`select pg_advisory_xact_lock(hashtext(${keysLock(purpose)}))`.execute(trx);
    if (!(await hasActiveKey(trx, purpose))) await newKey(trx, purpose);
  });
}

/**
 * Rotation: a new key becomes active; the old ones keep verifying (published as retiring) until everything
 * they signed has expired (`lifetimeSeconds`: a token's or an assertion's), so nothing valid is dropped.
 * Keys past that point are retired.
 */
export async function rotateSigningKey(
  db: Db,
  lifetimeSeconds: number,
  purpose: KeyPurpose = 'access',
): Promise<string> {
  return db.transaction().execute(async (trx) => {
    await sql`select pg_advisory_xact_lock(hashtext(${keysLock(purpose)}))`.execute(trx);
    await retireExpiredKeys(trx, purpose);
    const kid = await newKey(trx, purpose);
    const retireAt = new Date(Date.now() + (lifetimeSeconds + RETIRE_GRACE_SECONDS) * 1000);
    await retireActiveKeysExcept(trx, purpose, kid, retireAt);
    return kid;
  });
}

export { listAllKeys };

interface LoadedKey {
  kid: string;
  status: string;
  publicJwk: JWK;
  verifyKey: CryptoKey;
  signKey?: CryptoKey;
  /** The active key's private JWK (oidc-provider signs with a JWK, not a CryptoKey). */
  privateJwk?: JWK;
}

export interface KeyStore {
  /** The newest active key, for signing. */
  signingKey(): Promise<{ kid: string; key: CryptoKey }>;
  /** The same key as a private JWK with its `kid` (for oidc-provider's keystore). */
  signingJwk(): Promise<JWK & { kid: string }>;
  /** Public keys to publish (active and retiring). */
  jwks(): Promise<JSONWebKeySet>;
  /** Verification key by kid; undefined when the kid is unknown even after a reload. */
  verificationKey(kid: string | undefined): Promise<CryptoKey | undefined>;
  reload(): Promise<void>;
}

/**
 * In-memory view of the published keys of one purpose (access tokens by default). Reloaded periodically
 * and when a token names an unknown kid (throttled), so a rotation done by the operator command reaches
 * running edges without a restart.
 */
export function createKeyStore(
  db: Db,
  options: { purpose?: KeyPurpose; reloadEveryMs?: number; minReloadGapMs?: number } = {},
) {
  const purpose = options.purpose ?? 'access';
  const reloadEveryMs = options.reloadEveryMs ?? 30_000;
  const minReloadGapMs = options.minReloadGapMs ?? 1_000;
  let keys: LoadedKey[] = [];
  let loadedAt = 0;
  let loading: Promise<void> | undefined;

  async function load(): Promise<void> {
    const rows = await listPublishedKeys(db, purpose);
    const next: LoadedKey[] = [];
    for (const row of rows) {
      const publicJwk = row.public_jwk as JWK;
      const verifyKey = (await importJWK(publicJwk, row.alg)) as CryptoKey;
      const signKey =
        row.status === 'active'
          ? ((await importJWK(row.private_jwk as JWK, row.alg)) as CryptoKey)
          : undefined;
      const privateJwk = signKey
        ? { ...(row.private_jwk as JWK), kid: row.kid, alg: row.alg, use: 'sig' }
        : undefined;
      next.push({ kid: row.kid, status: row.status, publicJwk, verifyKey, signKey, privateJwk });
    }
    keys = next;
    loadedAt = Date.now();
  }

  function reload(): Promise<void> {
    loading ??= load().finally(() => {
      loading = undefined;
    });
    return loading;
  }

  async function fresh(): Promise<LoadedKey[]> {
    if (Date.now() - loadedAt > reloadEveryMs) await reload();
    return keys;
  }

  async function activeKey(): Promise<LoadedKey & { signKey: CryptoKey; privateJwk: JWK }> {
    let active = (await fresh()).find((k) => k.signKey);
    if (!active) {
      await ensureActiveKey(db, purpose);
      await reload();
      active = keys.find((k) => k.signKey);
    }
    if (!active?.signKey || !active.privateJwk) throw new Error('no active signing key');
    return active as LoadedKey & { signKey: CryptoKey; privateJwk: JWK };
  }

  const store: KeyStore = {
    async signingKey() {
      const active = await activeKey();
      return { kid: active.kid, key: active.signKey };
    },
    async signingJwk() {
      const active = await activeKey();
      return { ...active.privateJwk, kid: active.kid };
    },
    async jwks() {
      return { keys: (await fresh()).map((k) => k.publicJwk) };
    },
    async verificationKey(kid) {
      if (!kid) return undefined;
      let found = (await fresh()).find((k) => k.kid === kid);
      if (!found && Date.now() - loadedAt > minReloadGapMs) {
        await reload();
        found = keys.find((k) => k.kid === kid);
      }
      return found?.verifyKey;
    },
    reload,
  };
  return store;
}
