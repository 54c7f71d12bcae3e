import {
  createRemoteJWKSet,
  decodeJwt,
  decodeProtectedHeader,
  errors,
  type JWTPayload,
  type JWTVerifyGetKey,
  jwtVerify,
} from 'jose';
import { z } from 'zod';
import { forbidden, unauthorized, unavailable } from '../http/api-error.js';
import { type ProofVerifier, type ProvenIdentity, sameRepository } from './proof.js';

// Trusted publishing (as npm and PyPI do it, PyPI's warehouse/oidc: one verifier per issuer, claims
// checked explicitly): a GitHub Actions OIDC token, verified with jose against the issuer's JWKS (found
// through its discovery document), for the registry's own URL as audience. Every refusal says which
// check failed.

export interface OidcProofOptions {
  /** `iss` the tokens must carry; discovery is `<issuer>/.well-known/openid-configuration`. */
  issuer: string;
  /** The registry's public URL: the `aud` a token must have been requested for. */
  audience: string;
  /** Network timeout for discovery and the JWKS (ms). */
  timeoutMs?: number;
  /** Leeway for `exp`/`nbf` against clock skew (seconds). */
  clockToleranceSeconds?: number;
  /**
   * Records a token's `jti` until it expires: true the first time, false for a token presented before
   * (replay-guard.ts).
   */
  useJti(issuer: string, jti: string, expiresAtMs: number): Promise<boolean>;
}

const DiscoverySchema = z.object({ issuer: z.string(), jwks_uri: z.url() });

/** GitHub's claims a publish relies on (docs.github.com: "About security hardening with OpenID Connect"). */
const ActionsClaimsSchema = z.object({
  repository: z.string().min(1),
  repository_owner: z.string().min(1),
  repository_owner_id: z.string().regex(/^[1-9]\d{0,18}$/),
  repository_id: z.string().regex(/^[1-9]\d{0,18}$/),
  ref: z.string().optional(),
  // Each token is accepted once; GitHub's always carry a jti, so one without it is refused.
  jti: z.string().min(1).max(256),
  exp: z.number(),
});

/** The algorithms GitHub signs ID tokens with; jose refuses any other (and `none`) before a key lookup. */
const ALGORITHMS = ['RS256'];

function refused(message: string) {
  return unauthorized(`OIDC token refused: ${message}`);
}

export function createOidcProof(options: OidcProofOptions): ProofVerifier {
  const timeoutMs = options.timeoutMs ?? 10_000;
  const toleranceSeconds = options.clockToleranceSeconds ?? 30;
  let keys: JWTVerifyGetKey | undefined;

  /** The issuer's key set, from its discovery document (once; a failed discovery is tried again). */
  async function keySet(): Promise<JWTVerifyGetKey> {
    if (keys) return keys;
    const url = `${options.issuer}/.well-known/openid-configuration`;
    let discovery: z.infer<typeof DiscoverySchema>;
    try {
      const response = await fetch(url, { signal: AbortSignal.timeout(timeoutMs), redirect: 'error' });
      if (!response.ok) throw new Error(`HTTP ${response.status}`);
      discovery = DiscoverySchema.parse(await response.json());
    } catch (error) {
      throw unavailable(`The OIDC issuer ${options.issuer} could not be reached; try again later`, error);
    }
    // OpenID Connect Discovery §4.3: the document must name the issuer it was fetched for.
    if (discovery.issuer.replace(/\/+$/, '') !== options.issuer) {
      throw unavailable(`The OIDC issuer's discovery document names another issuer (${discovery.issuer})`);
    }
    keys = createRemoteJWKSet(new URL(discovery.jwks_uri), { timeoutDuration: timeoutMs });
    return keys;
  }

  async function verifyToken(token: string): Promise<JWTPayload> {
    // Read before verifying, only to say which check fails: nothing here is trusted until jwtVerify passes.
    let claimed: JWTPayload;
    let kid: string | undefined;
    try {
      claimed = decodeJwt(token);
      kid = decodeProtectedHeader(token).kid;
    } catch {
      throw refused('it is not a well-formed JWT');
    }
    if (claimed.iss !== options.issuer) {
      throw refused(
        `wrong issuer: it was issued by ${JSON.stringify(claimed.iss ?? null)}; this registry trusts ${options.issuer}`,
      );
    }
    try {
      const { payload } = await jwtVerify(token, await keySet(), {
        issuer: options.issuer,
        audience: options.audience,
        algorithms: ALGORITHMS,
        requiredClaims: ['exp', 'iat', 'aud'],
        clockTolerance: toleranceSeconds,
      });
      return payload;
    } catch (error) {
      if (error instanceof errors.JWTExpired) {
        const at = typeof claimed.exp === 'number' ? new Date(claimed.exp * 1000).toISOString() : 'unknown';
        throw refused(`expired at ${at}; request a new token`);
      }
      if (error instanceof errors.JWTClaimValidationFailed) {
        if (error.claim === 'aud') {
          throw refused(
            `wrong audience: it is for ${JSON.stringify(claimed.aud ?? null)}; request it for ${options.audience}`,
          );
        }
        throw refused(`the "${error.claim}" claim failed: ${error.message}`);
      }
      if (error instanceof errors.JWKSNoMatchingKey) {
        throw refused(`unknown signing key${kid ? ` "${kid}"` : ''}: the issuer's key set does not hold it`);
      }
      if (error instanceof errors.JWSSignatureVerificationFailed) {
        throw refused(`its signature does not verify with the issuer's key${kid ? ` "${kid}"` : ''}`);
      }
      if (error instanceof errors.JOSEAlgNotAllowed) throw refused('it is not signed with RS256');
      if (error instanceof errors.JWKSTimeout || error instanceof errors.JWKSInvalid) {
        throw unavailable("The OIDC issuer's key set could not be read; try again later", error);
      }
      if (error instanceof errors.JOSEError) throw refused(error.message);
      throw unavailable("The OIDC issuer's key set could not be read; try again later", error);
    }
  }

  return {
    async verify(token, target): Promise<ProvenIdentity> {
      const payload = await verifyToken(token);
      const parsed = ActionsClaimsSchema.safeParse(payload);
      if (!parsed.success) {
        const claim = String(parsed.error.issues[0]?.path[0] ?? 'claims');
        throw refused(`the "${claim}" claim is missing or malformed (a GitHub Actions token carries it)`);
      }
      const claims = parsed.data;
      const [owner = ''] = target.repository.split('/');
      if (!sameRepository(claims.repository, target.repository)) {
        throw forbidden(
          `The OIDC token is for repository ${claims.repository}, not ${target.repository}: publish from that repository's own workflow`,
        );
      }
      if (claims.repository_owner.toLowerCase() !== owner.toLowerCase()) {
        throw forbidden(`The OIDC token's repository_owner is ${claims.repository_owner}, not ${owner}`);
      }
      if (target.ref !== undefined && claims.ref !== `refs/heads/${target.ref}`) {
        throw forbidden(
          `The OIDC token was issued to a run on ${claims.ref ?? 'no ref'}, not refs/heads/${target.ref}`,
        );
      }
      // Last, once every check passed: a token refused for another reason may still be used as meant.
      const expiresAtMs = (claims.exp + toleranceSeconds) * 1000;
      if (!(await options.useJti(options.issuer, claims.jti, expiresAtMs))) {
        throw refused('it was used before (each token is accepted once); request a new token');
      }
      return {
        proof: 'oidc',
        repository: claims.repository,
        ownerLogin: claims.repository_owner,
        ownerId: Number(claims.repository_owner_id),
        repositoryId: Number(claims.repository_id),
      };
    },
  };
}
