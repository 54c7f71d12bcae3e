import { createHash, createPrivateKey, createPublicKey, type KeyObject, sign, verify } from 'node:crypto';

// The registry's signing key (issue 30; docs/provenance.md): Ed25519, the algorithm of the signed notes
// Go's checksum database and Sigstore's logs use for checkpoints, and one `openssl pkeyutl` verifies.
// The private key stays behind `RegistrySigner`: a PEM from the environment or a file by default; a
// cloud KMS implements the same two members.

export interface RegistrySigner {
  /** `SHA256:` + base64 of the SHA-256 of the public key's SPKI DER (npm's key id form). */
  readonly keyId: string;
  /** The public key (Ed25519). */
  readonly publicKey: KeyObject;
  /** An Ed25519 signature of `message`. */
  sign(message: Uint8Array): Promise<Buffer>;
}

/** The key id of an Ed25519 public key: `SHA256:` + base64 SHA-256 of its SPKI DER. */
export function keyIdOf(publicKey: KeyObject): string {
  const der = publicKey.export({ type: 'spki', format: 'der' });
  return `SHA256:${createHash('sha256').update(der).digest('base64')}`;
}

/** The public key as published: base64 of its SPKI DER (what npm's keys endpoint serves). */
export function publicKeyBase64(publicKey: KeyObject): string {
  return publicKey.export({ type: 'spki', format: 'der' }).toString('base64');
}

/** An Ed25519 public key from `publicKeyBase64`'s form; undefined when it is not one. */
export function publicKeyFromBase64(value: string): KeyObject | undefined {
  try {
    const key = createPublicKey({ key: Buffer.from(value, 'base64'), format: 'der', type: 'spki' });
    return key.asymmetricKeyType === 'ed25519' ? key : undefined;
  } catch {
    return undefined;
  }
}

/** A signer over an Ed25519 private key in PKCS#8 PEM; throws a plain message for anything else. */
export function signerFromPem(pem: string): RegistrySigner {
  let privateKey: KeyObject;
  try {
    privateKey = createPrivateKey(pem);
  } catch {
    throw new Error('the registry signing key is not a PEM private key');
  }
  if (privateKey.asymmetricKeyType !== 'ed25519')
    throw new Error(`the registry signing key must be Ed25519, not ${privateKey.asymmetricKeyType}`);
  const publicKey = createPublicKey(privateKey);
  return {
    keyId: keyIdOf(publicKey),
    publicKey,
    sign: async (message) => sign(null, message, privateKey),
  };
}

/** Whether `signature` is `publicKey`'s Ed25519 signature of `message`. */
export function verifySignature(publicKey: KeyObject, message: Uint8Array, signature: Uint8Array): boolean {
  try {
    return verify(null, message, publicKey, signature);
  } catch {
    return false;
  }
}

/**
 * What a version's signature covers, as npm's registry signatures do (`<name>@<version>:<integrity>`):
 * `@scope/name@version:sha512-…`. The integrity is the archive's, so the signature covers every byte.
 */
export function versionSignedText(scope: string, name: string, version: string, integrity: string): string {
  return `@${scope}/${name}@${version}:${integrity}`;
}
