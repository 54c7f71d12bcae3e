import { createHash, createPublicKey, type KeyObject } from 'node:crypto';
import { HASH_SIZE } from './merkle.js';
import { type RegistrySigner, verifySignature } from './signer.js';

// The log's checkpoints as signed notes (issue 30; docs/provenance.md): the checkpoint text of
// transparency-dev (origin, size, base64 root, one per line) signed in the note format of Go's checksum
// database (golang.org/x/mod/sumdb/note), so Go's and Sigstore's witness tooling read them:
//
//   registry.example/log
//   1234
//   <base64 root hash>
//
//   — registry.example/log <base64(4-byte key hash || Ed25519 signature)>
//
// The signature covers the text up to and including its last newline. The key hash names the key:
// the first 4 bytes of SHA-256(name || "\n" || 0x01 || 32-byte Ed25519 public key), 0x01 being note's
// Ed25519 algorithm byte.

const ED25519_ALGORITHM = 0x01;
const SIGNATURE_PREFIX = '\u2014 ';

/** A tree head: what a checkpoint says. */
export interface Checkpoint {
  /** The log's name: the registry's public host + `/log`. */
  origin: string;
  size: number;
  rootHash: Buffer;
}

/** The raw 32-byte Ed25519 public key. */
function rawEd25519(publicKey: KeyObject): Buffer {
  const jwk = publicKey.export({ format: 'jwk' });
  if (jwk.crv !== 'Ed25519' || typeof jwk.x !== 'string') throw new Error('the log key must be Ed25519');
  return Buffer.from(jwk.x, 'base64url');
}

/** A note key's hash: the first 4 bytes of SHA-256(name || "\n" || 0x01 || public key). */
export function noteKeyHash(name: string, publicKey: KeyObject): Buffer {
  return createHash('sha256')
    .update(`${name}\n`)
    .update(Buffer.from([ED25519_ALGORITHM]))
    .update(rawEd25519(publicKey))
    .digest()
    .subarray(0, 4);
}

/**
 * The key in the verifier-key form of Go's note package, `<name>+<hash hex>+<base64(0x01 || key)>`:
 * what `GOSUMDB`-style tools and witnesses are configured with.
 */
export function noteVerifierKey(name: string, publicKey: KeyObject): string {
  const key = Buffer.concat([Buffer.from([ED25519_ALGORITHM]), rawEd25519(publicKey)]);
  return `${name}+${noteKeyHash(name, publicKey).toString('hex')}+${key.toString('base64')}`;
}

/** An Ed25519 public key from a verifier key (`name+hash+key`); undefined when it is not one for `name`. */
export function publicKeyFromVerifierKey(vkey: string): { name: string; publicKey: KeyObject } | undefined {
  // `+` separates the name and the hash; the base64 key after them may hold `+` itself.
  const [name, hash] = vkey.split('+', 2);
  if (!name || !hash) return undefined;
  const encoded = vkey.slice(name.length + hash.length + 2);
  const key = Buffer.from(encoded, 'base64');
  if (key.length !== 33 || key[0] !== ED25519_ALGORITHM) return undefined;
  try {
    const publicKey = createPublicKey({
      key: { kty: 'OKP', crv: 'Ed25519', x: key.subarray(1).toString('base64url') },
      format: 'jwk',
    });
    return noteKeyHash(name, publicKey).toString('hex') === hash ? { name, publicKey } : undefined;
  } catch {
    return undefined;
  }
}

/** The checkpoint's text: origin, size and base64 root hash, each on its own line. */
export function checkpointText(checkpoint: Checkpoint): string {
  return `${checkpoint.origin}\n${checkpoint.size}\n${checkpoint.rootHash.toString('base64')}\n`;
}

/** A note's name may not be empty nor hold spaces or `+` (sumdb/note). */
export function isNoteName(name: string): boolean {
  return name.length > 0 && !/[\s+]/u.test(name);
}

/** The checkpoint signed by `signer` as a note named by the checkpoint's origin. */
export async function signCheckpoint(checkpoint: Checkpoint, signer: RegistrySigner): Promise<string> {
  if (!isNoteName(checkpoint.origin))
    throw new Error(`"${checkpoint.origin}" cannot name a log (no spaces or +)`);
  const text = checkpointText(checkpoint);
  const signature = await signer.sign(Buffer.from(text, 'utf8'));
  const encoded = Buffer.concat([noteKeyHash(checkpoint.origin, signer.publicKey), signature]).toString(
    'base64',
  );
  return `${text}\n${SIGNATURE_PREFIX}${checkpoint.origin} ${encoded}\n`;
}

/** A checkpoint note that verified, or why it did not. */
export type NoteCheck = { ok: true; checkpoint: Checkpoint } | { ok: false; reason: string };

/**
 * Opens a checkpoint note: its text must be a checkpoint of `origin` and one of its signature lines the
 * Ed25519 signature of `publicKey` under that name. Lines after the root (extensions) are allowed and
 * ignored; signatures by other keys (a witness's cosignature) are skipped.
 */
export function openCheckpointNote(note: string, origin: string, publicKey: KeyObject): NoteCheck {
  const split = note.lastIndexOf('\n\n');
  if (split < 0 || !note.endsWith('\n')) return { ok: false, reason: 'the checkpoint is not a signed note' };
  const text = note.slice(0, split + 1);
  const lines = text.slice(0, -1).split('\n');
  const [name, sizeLine, rootLine] = lines;
  if (name !== origin) return { ok: false, reason: `the checkpoint is of "${name}", not of "${origin}"` };
  if (!sizeLine || !/^(0|[1-9][0-9]{0,15})$/.test(sizeLine) || !Number.isSafeInteger(Number(sizeLine)))
    return { ok: false, reason: 'the checkpoint has no valid size line' };
  const rootHash = Buffer.from(rootLine ?? '', 'base64');
  if (rootHash.length !== HASH_SIZE || rootHash.toString('base64') !== rootLine)
    return { ok: false, reason: 'the checkpoint has no valid root hash line' };
  const keyHash = noteKeyHash(origin, publicKey);
  const message = Buffer.from(text, 'utf8');
  for (const line of note.slice(split + 2, -1).split('\n')) {
    if (!line.startsWith(SIGNATURE_PREFIX))
      return { ok: false, reason: 'the note has a malformed signature line' };
    const [signer, encoded, ...rest] = line.slice(SIGNATURE_PREFIX.length).split(' ');
    const bytes = Buffer.from(encoded ?? '', 'base64');
    if (rest.length > 0 || bytes.length < 5)
      return { ok: false, reason: 'the note has a malformed signature line' };
    if (signer !== origin || !bytes.subarray(0, 4).equals(keyHash)) continue;
    if (!verifySignature(publicKey, message, bytes.subarray(4)))
      return {
        ok: false,
        reason: `the checkpoint's signature by ${origin} does not verify with the log key`,
      };
    return { ok: true, checkpoint: { origin, size: Number(sizeLine), rootHash } };
  }
  return {
    ok: false,
    reason: `the checkpoint is not signed by the log key (key hash ${keyHash.toString('hex')})`,
  };
}
