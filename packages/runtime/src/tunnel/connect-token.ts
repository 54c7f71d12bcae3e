import { randomUUID } from 'node:crypto';
import { decodeJwt, jwtVerify, SignJWT } from 'jose';

// How a local runtime proves, when it dials out, that it holds a tunnel session's secret without sending
// the secret: a short JWS (HS256, the session secret) in the upgrade's Authorization header, naming the
// session (`sid`) and meant only for the connect (`aud`). The edge consumes its `jti` once, so a captured
// one cannot open a second connection.

export const CONNECT_AUDIENCE = 'pkgreg-tunnel-connect';
export const CONNECT_TOKEN_LIFETIME_SECONDS = 60;

const keyOf = (secret: string) => new TextEncoder().encode(secret);

export function signConnectToken(input: { sessionId: string; secret: string }): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ sid: input.sessionId })
    .setProtectedHeader({ alg: 'HS256', typ: 'pkgreg-tunnel-connect+jwt' })
    .setAudience(CONNECT_AUDIENCE)
    .setJti(randomUUID())
    .setIssuedAt(now)
    .setExpirationTime(now + CONNECT_TOKEN_LIFETIME_SECONDS)
    .sign(keyOf(input.secret));
}

/**
 * The session a connect token was signed for, or undefined when it is malformed, names no known session,
 * or fails the signature, audience or expiry checks. `secretOf` answers a session's secret.
 */
export async function verifyConnectToken(
  token: string,
  secretOf: (sessionId: string) => string | undefined,
): Promise<{ sessionId: string; jti: string; exp: number } | undefined> {
  let sid: unknown;
  try {
    ({ sid } = decodeJwt(token));
  } catch {
    return undefined;
  }
  const secret = typeof sid === 'string' ? secretOf(sid) : undefined;
  if (typeof sid !== 'string' || !secret) return undefined;
  try {
    const { payload } = await jwtVerify(token, keyOf(secret), {
      algorithms: ['HS256'],
      audience: CONNECT_AUDIENCE,
      requiredClaims: ['sid', 'jti', 'iat', 'exp'],
      maxTokenAge: CONNECT_TOKEN_LIFETIME_SECONDS,
    });
    if (payload.sid !== sid) return undefined;
    return { sessionId: sid, jti: payload.jti as string, exp: payload.exp as number };
  } catch {
    return undefined;
  }
}
