import { createPublicKey, type KeyObject, verify } from 'node:crypto';
import type { RegistryKeysResponse, VersionSignature } from '@pkgreg/contracts';
import type { Context } from './context.js';
import { CliError, EXIT } from './errors.js';

// Registry signatures (docs/provenance.md, "Verifying signatures"), checked the way npm checks its
// registry's at install and in `npm audit signatures`: the registry signs `@scope/name@version:integrity`
// with Ed25519 and publishes its public keys at GET /api/keys. The integrity is the SRI sha512 the
// archive is checked against before anything is written, so a good signature vouches for every byte.

/** A key of GET /api/keys, ready to verify with. */
export interface RegistryKey {
  keyid: string;
  /** Undefined when what is published is not an Ed25519 public key: nothing it signed verifies. */
  publicKey: KeyObject | undefined;
  /** From when the key is no longer trusted; null while it is current. */
  expires: Date | null;
}

/** What is checked of a version; `name` is `@scope/name` as it was asked for, not as the record says. */
export interface SignedVersion {
  name: string;
  version: string;
  integrity: string;
  createdAt: string;
  signatures: readonly VersionSignature[];
}

/** A version whose signatures hold (and the key that verified it), or why not, as one phrase. */
export type SignatureCheck = { ok: true; keyid: string } | { ok: false; problem: string };

/** What the registry signs (its `versionSignedText`; a test keeps the two equal). */
export function signedText(name: string, version: string, integrity: string): string {
  return `${name}@${version}:${integrity}`;
}

function ed25519Key(base64Spki: string): KeyObject | undefined {
  try {
    const key = createPublicKey({ key: Buffer.from(base64Spki, 'base64'), format: 'der', type: 'spki' });
    return key.asymmetricKeyType === 'ed25519' ? key : undefined;
  } catch {
    return undefined;
  }
}

/** The keys of GET /api/keys by key id. */
export function registryKeys(response: RegistryKeysResponse): Map<string, RegistryKey> {
  return new Map(
    response.keys.map((key) => [
      key.keyid,
      {
        keyid: key.keyid,
        publicKey: ed25519Key(key.key),
        expires: key.expires === null ? null : new Date(key.expires),
      },
    ]),
  );
}

function verifies(key: KeyObject, text: Buffer, signature: string): boolean {
  try {
    return verify(null, text, key, Buffer.from(signature, 'base64'));
  } catch {
    // A signature of the wrong length (a hostile record) is a bad signature, not a crash.
    return false;
  }
}

function signatureProblem(
  key: RegistryKey | undefined,
  signature: VersionSignature,
  text: Buffer,
  createdAt: Date,
): string | undefined {
  const { keyid } = signature;
  if (!key) return `signed by an unknown key ${keyid} (not one the registry publishes)`;
  // A key is trusted for what was created before it expired: a retired key's old signatures stay good,
  // a stolen one cannot vouch for versions made after its retirement.
  if (key.expires !== null && key.expires.getTime() <= createdAt.getTime())
    return `signed by key ${keyid}, which expired (${key.expires.toISOString()}) before the version was created (${createdAt.toISOString()})`;
  if (!key.publicKey || !verifies(key.publicKey, text, signature.sig))
    return `the signature by key ${keyid} does not verify (its name, version or integrity is not what the key signed)`;
  return undefined;
}

/**
 * Checks a version's signatures against the registry's keys (at least one key published). Every
 * signature must hold, as npm requires: one bad signature beside a good one is still a forgery. The
 * key id returned is the first signature's (the registry lists the newest key first).
 */
export function checkSignatures(
  keys: ReadonlyMap<string, RegistryKey>,
  version: SignedVersion,
): SignatureCheck {
  const [first] = version.signatures;
  if (!first)
    return {
      ok: false,
      problem: 'unsigned (the registry publishes signing keys, this version has no signature)',
    };
  const text = Buffer.from(signedText(version.name, version.version, version.integrity), 'utf8');
  const createdAt = new Date(version.createdAt);
  for (const signature of version.signatures) {
    const problem = signatureProblem(keys.get(signature.keyid), signature, text, createdAt);
    if (problem) return { ok: false, problem };
  }
  return { ok: true, keyid: first.keyid };
}

/** Checks versions against the registry's keys, fetched at the first call and kept for the run. */
export interface SignatureChecker {
  /** Whether the registry publishes any key: without one there is nothing to verify. */
  keysPublished(): Promise<boolean>;
  /** The check, or undefined when the registry publishes no keys. */
  check(version: SignedVersion): Promise<SignatureCheck | undefined>;
  /** The registry's keys (GET /api/keys, the same fetch): they sign checkpoints and attestations too. */
  keys(): Promise<ReadonlyMap<string, RegistryKey>>;
}

/** The registry's keys; none when it publishes none, or predates GET /api/keys (404). */
async function fetchKeys(ctx: Context): Promise<Map<string, RegistryKey>> {
  try {
    return registryKeys(await ctx.client.keys());
  } catch (error) {
    if (error instanceof CliError && error.exitCode === EXIT.notFound) return new Map();
    throw error;
  }
}

export function signatureChecker(ctx: Context): SignatureChecker {
  let keys: Promise<Map<string, RegistryKey>> | undefined;
  const load = () =>
    (keys ??= fetchKeys(ctx).then((found) => {
      ctx.debug(
        found.size
          ? `verifying signatures with ${found.size} registry key${found.size === 1 ? '' : 's'}`
          : 'the registry publishes no signing keys: nothing to verify',
      );
      return found;
    }));
  return {
    keysPublished: async () => (await load()).size > 0,
    async check(version) {
      const known = await load();
      return known.size === 0 ? undefined : checkSignatures(known, version);
    },
    keys: load,
  };
}

/** A signature check that failed, as install refuses it (exit 9). */
export function signatureError(label: string, problem: string): CliError {
  return new CliError(
    EXIT.signature,
    `Signature check failed for ${label}: ${problem}; not installed (--no-verify skips the check)`,
  );
}
