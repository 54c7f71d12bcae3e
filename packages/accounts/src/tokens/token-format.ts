import { createHash, randomBytes } from 'node:crypto';
import { crc32 } from 'node:zlib';
import { ACCESS_TOKEN_PATTERN } from '@pkgreg/contracts';

// The form of a pkgreg access token, as GitHub's are formed so secret scanners can find leaked ones
// (github.blog, "Behind GitHub's new authentication token formats"): a recognisable prefix, 30 random
// base62 characters (178 bits) and a 6-character base62 CRC32 of them, which tells a token from a typo
// without a database lookup. Only its SHA-256 is stored.

export const TOKEN_PREFIX = 'pkgreg_';
const RANDOM_LENGTH = 30;
const CHECKSUM_LENGTH = 6;
const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** What secret scanners (and pkgreg's own risk scan) match. */
export const TOKEN_PATTERN = ACCESS_TOKEN_PATTERN;

function base62(value: number, length: number): string {
  let out = '';
  let rest = value;
  for (let i = 0; i < length; i += 1) {
    out = ALPHABET[rest % 62] + out;
    rest = Math.floor(rest / 62);
  }
  return out;
}

function checksumOf(random: string): string {
  return base62(crc32(random), CHECKSUM_LENGTH);
}

/** A new token: the secret shown once, the hash stored, the prefix lists show. */
export function generateToken(): { token: string; hash: Buffer; prefix: string } {
  let random = '';
  // Rejection sampling keeps every character uniform (256 is not a multiple of 62).
  while (random.length < RANDOM_LENGTH) {
    for (const byte of randomBytes(RANDOM_LENGTH * 2)) {
      if (byte < 248 && random.length < RANDOM_LENGTH) random += ALPHABET[byte % 62];
    }
  }
  const token = `${TOKEN_PREFIX}${random}${checksumOf(random)}`;
  return { token, hash: hashToken(token), prefix: displayPrefix(token) };
}

/** True when the string has a token's form and its checksum holds. */
export function isWellFormedToken(value: string): boolean {
  if (value.length !== TOKEN_PREFIX.length + RANDOM_LENGTH + CHECKSUM_LENGTH) return false;
  if (!value.startsWith(TOKEN_PREFIX) || !TOKEN_PATTERN.test(value)) return false;
  const body = value.slice(TOKEN_PREFIX.length);
  return checksumOf(body.slice(0, RANDOM_LENGTH)) === body.slice(RANDOM_LENGTH);
}

export function hashToken(token: string): Buffer {
  return createHash('sha256').update(token).digest();
}

/** The first characters, enough to tell one's tokens apart in a list, far too few to guess the rest. */
export function displayPrefix(token: string): string {
  return token.slice(0, TOKEN_PREFIX.length + 4);
}
