import { createHash, randomUUID } from 'node:crypto';
import { RejectError } from '@pkgreg/contracts';
import { jwtVerify, SignJWT } from 'jose';
import type { NonceStore } from './nonce-store.js';

// decisions.md, Tunnel envelope: a JWS (HS256, the session secret) in `Pkgreg-Tunnel-Envelope` binding a
// forwarded call to its session, its subject and its exact body, valid for at most 60 s, usable once.

export const ENVELOPE_HEADER = 'pkgreg-tunnel-envelope';
export const MAX_ENVELOPE_LIFETIME_SECONDS = 60;
const DEFAULT_LIFETIME_SECONDS = 30;

export function bodySha256(body: string | Buffer): string {
  return createHash('sha256').update(body).digest('hex');
}

const keyOf = (secret: string) => new TextEncoder().encode(secret);

export async function signEnvelope(input: {
  sessionId: string;
  secret: string;
  namespace: string;
  body: string;
  lifetimeSeconds?: number;
}): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ sid: input.sessionId, bodySha256: bodySha256(input.body) })
    .setProtectedHeader({ alg: 'HS256', typ: 'pkgreg-tunnel+jwt' })
    .setSubject(input.namespace)
    .setJti(randomUUID())
    .setIssuedAt(now)
    .setExpirationTime(
      now + Math.min(input.lifetimeSeconds ?? DEFAULT_LIFETIME_SECONDS, MAX_ENVELOPE_LIFETIME_SECONDS),
    )
    .sign(keyOf(input.secret));
}

/**
 * The local runtime's check of a forwarded call. Signature, session, lifetime and body hash failures are
 * `tunnel_envelope_invalid`; a nonce seen before is `tunnel_replay_detected` (the first use wins).
 */
export async function verifyEnvelope(input: {
  envelope: string | undefined;
  sessionId: string;
  secret: string;
  body: string | Buffer;
  nonces: NonceStore;
}): Promise<{ namespace: string; jti: string }> {
  const invalid = (message: string) => new RejectError('tunnel_envelope_invalid', message);
  if (!input.envelope) throw invalid('envelope missing');
  let payload: Record<string, unknown>;
  try {
    ({ payload } = await jwtVerify(input.envelope, keyOf(input.secret), {
      algorithms: ['HS256'],
      requiredClaims: ['sid', 'sub', 'jti', 'iat', 'exp', 'bodySha256'],
    }));
  } catch {
    throw invalid('envelope signature, claims or expiry invalid');
  }
  const { sid, sub, jti, iat, exp } = payload as {
    sid: unknown;
    sub: string;
    jti: string;
    iat: number;
    exp: number;
  };
  if (sid !== input.sessionId) throw invalid('envelope bound to another session');
  if (exp - iat > MAX_ENVELOPE_LIFETIME_SECONDS) throw invalid('envelope lifetime over 60 s');
  if (payload.bodySha256 !== bodySha256(input.body)) throw invalid('body does not match envelope');
  if (!(await input.nonces.consume(input.sessionId, jti, exp)))
    throw new RejectError('tunnel_replay_detected');
  return { namespace: sub, jti };
}
