import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Redis } from 'ioredis';

// The one-time codes of the CLI's browser sign-in (docs/cli-auth.md): issued to a signed-in person who
// approved, kept in Redis for five minutes under their hash, bound to the redirect_uri, the PKCE
// challenge and the account, and taken at the first exchange whatever its outcome (GETDEL), so a code
// is used once and a wrong verifier costs the attacker the code too.

const KEY_PREFIX = 'pkgreg:registry:cli-code:';
export const CLI_CODE_TTL_S = 300;

export interface CliCodeGrant {
  accountId: string;
  email: string;
  redirectUri: string;
  codeChallenge: string;
}

function keyOf(code: string): string {
  return `${KEY_PREFIX}${createHash('sha256').update(code).digest('hex')}`;
}

export async function issueCliCode(redis: Redis, grant: CliCodeGrant): Promise<string> {
  const code = randomBytes(32).toString('base64url');
  await redis.set(keyOf(code), JSON.stringify(grant), 'EX', CLI_CODE_TTL_S);
  return code;
}

export type CliCodeRedemption =
  | { ok: true; grant: CliCodeGrant }
  | { ok: false; reason: 'unknown' | 'redirect_uri' | 'code_verifier' };

/** RFC 7636 S256: BASE64URL(SHA256(verifier)) compared in constant time. */
function pkceMatches(verifier: string, challenge: string): boolean {
  const computed = Buffer.from(createHash('sha256').update(verifier).digest('base64url'));
  const expected = Buffer.from(challenge);
  return computed.length === expected.length && timingSafeEqual(computed, expected);
}

/** Takes the code (it is gone after this call) and checks it against the exchange's redirect_uri and verifier. */
export async function redeemCliCode(
  redis: Redis,
  code: string,
  exchange: { redirectUri: string; codeVerifier: string },
): Promise<CliCodeRedemption> {
  const stored = await redis.getdel(keyOf(code));
  if (stored === null) return { ok: false, reason: 'unknown' };
  const grant = JSON.parse(stored) as CliCodeGrant;
  if (grant.redirectUri !== exchange.redirectUri) return { ok: false, reason: 'redirect_uri' };
  if (!pkceMatches(exchange.codeVerifier, grant.codeChallenge)) return { ok: false, reason: 'code_verifier' };
  return { ok: true, grant };
}
