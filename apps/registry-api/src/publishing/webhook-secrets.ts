import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

// Webhook secrets (docs/publishing.md): HMAC verification needs the secret itself, so a hash will not
// do; rather than keep secrets, encrypted or not, the registry keeps a random salt per repository and
// derives the secret as HMAC-SHA256(WEBHOOK_SECRET_KEY, salt). A copy of the database alone holds no
// secret; rotating the key (or a repository's salt) replaces the secrets it derived.

export function newSalt(): Buffer {
  return randomBytes(32);
}

/** `whsec_` + 64 hex digits: what the publisher pastes into the code host's webhook settings. */
export function webhookSecret(key: string, salt: Buffer): string {
  return `whsec_${createHmac('sha256', key).update(salt).digest('hex')}`;
}

const SIGNATURE = /^sha256=([0-9a-f]{64})$/i;

/** Whether `header` (X-Hub-Signature-256) is the HMAC-SHA256 of the raw body with `secret`, in constant time. */
export function signatureMatches(secret: string, rawBody: Buffer, header: string): boolean {
  const match = SIGNATURE.exec(header.trim());
  if (!match?.[1]) return false;
  const expected = createHmac('sha256', secret).update(rawBody).digest();
  const given = Buffer.from(match[1], 'hex');
  return given.length === expected.length && timingSafeEqual(given, expected);
}
