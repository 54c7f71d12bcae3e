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
import { unauthorized, unavailable } from '../http/api-error.js';

// The registry's one check of CI OIDC tokens (PyPI's warehouse/oidc and npm's trusted publishing do the
// same: one verifier per issuer, claims checked explicitly by the caller). A token is verified with jose
// against its issuer's JWKS, found through the issuer's discovery document, for the registry's own URL
// as audience. Publishing a repository (oidc-proof.ts) trusts OIDC_ISSUER; uploads by trusted publishers
// (uploads/trusted-publishing.ts) trust TRUSTED_PUBLISHING_ISSUERS. Every refusal says which check failed.

export interface OidcVerifierOptions {
  /** The `iss` values trusted; discovery is `<issuer>/.well-known/openid-configuration`. */
  issuers: readonly string[];
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

export interface VerifiedOidcToken {
  issuer: string;
  claims: JWTPayload;
}

export interface OidcVerifier {
  readonly issuers: readonly string[];
  /** Issuer, signature, audience and times; a 401 (or a 503 when the issuer cannot be read) otherwise. */
  verify(token: string): Promise<VerifiedOidcToken>;
  /**
   * Accepts the token once: a 401 when it has no `jti` or was presented before. Call it last, once every
   * other check passed, so a token refused for another reason may still be used as meant.
   */
  spend(token: VerifiedOidcToken): Promise<void>;
}

const DiscoverySchema = z.object({ issuer: z.string(), jwks_uri: z.url() });
const OnceSchema = z.object({ jti: z.string().min(1).max(256), exp: z.number() });

/** The algorithms CI issuers sign ID tokens with; jose refuses any other (and `none`) before a key lookup. */
const ALGORITHMS = ['RS256'];

export function oidcRefused(message: string) {
  return unauthorized(`OIDC token refused: ${message}`);
}

const withoutSlash = (url: string) => url.replace(/\/+$/, '');

export function createOidcVerifier(options: OidcVerifierOptions): OidcVerifier {
  const timeoutMs = options.timeoutMs ?? 10_000;
  const toleranceSeconds = options.clockToleranceSeconds ?? 30;
  const issuers = options.issuers.map(withoutSlash);
  const keys = new Map<string, JWTVerifyGetKey>();

  /** The issuer's key set, from its discovery document (once; a failed discovery is tried again). */
  async function keySet(issuer: string): Promise<JWTVerifyGetKey> {
    const known = keys.get(issuer);
    if (known) return known;
    const url = `${issuer}/.well-known/openid-configuration`;
    let discovery: z.infer<typeof DiscoverySchema>;
    try {
      const response = await fetch(url, { signal: AbortSignal.timeout(timeoutMs), redirect: 'error' });
      if (!response.ok) throw new Error(`HTTP ${response.status}`);
      discovery = DiscoverySchema.parse(await response.json());
    } catch (error) {
      throw unavailable(`The OIDC issuer ${issuer} could not be reached; try again later`, error);
    }
    // OpenID Connect Discovery §4.3: the document must name the issuer it was fetched for.
    if (withoutSlash(discovery.issuer) !== issuer) {
      throw unavailable(`The OIDC issuer's discovery document names another issuer (${discovery.issuer})`);
    }
    const set = createRemoteJWKSet(new URL(discovery.jwks_uri), { timeoutDuration: timeoutMs });
    keys.set(issuer, set);
    return set;
  }

  return {
    issuers,
    async verify(token) {
      // Read before verifying, only to say which check fails: nothing here is trusted until jwtVerify passes.
      let claimed: JWTPayload;
      let kid: string | undefined;
      try {
        claimed = decodeJwt(token);
        kid = decodeProtectedHeader(token).kid;
      } catch {
        throw oidcRefused('it is not a well-formed JWT');
      }
      const issuer = typeof claimed.iss === 'string' ? issuers.find((i) => i === claimed.iss) : undefined;
      if (issuer === undefined) {
        throw oidcRefused(
          `wrong issuer: it was issued by ${JSON.stringify(claimed.iss ?? null)}; this registry trusts ${issuers.join(', ')}`,
        );
      }
      try {
        const { payload } = await jwtVerify(token, await keySet(issuer), {
          issuer,
          audience: options.audience,
          algorithms: ALGORITHMS,
          requiredClaims: ['exp', 'iat', 'aud'],
          clockTolerance: toleranceSeconds,
        });
        return { issuer, claims: payload };
      } catch (error) {
        if (error instanceof errors.JWTExpired) {
          const at = typeof claimed.exp === 'number' ? new Date(claimed.exp * 1000).toISOString() : 'unknown';
          throw oidcRefused(`expired at ${at}; request a new token`);
        }
        if (error instanceof errors.JWTClaimValidationFailed) {
          if (error.claim === 'aud') {
            throw oidcRefused(
              `wrong audience: it is for ${JSON.stringify(claimed.aud ?? null)}; request it for ${options.audience}`,
            );
          }
          throw oidcRefused(`the "${error.claim}" claim failed: ${error.message}`);
        }
        if (error instanceof errors.JWKSNoMatchingKey) {
          throw oidcRefused(
            `unknown signing key${kid ? ` "${kid}"` : ''}: the issuer's key set does not hold it`,
          );
        }
        if (error instanceof errors.JWSSignatureVerificationFailed) {
          throw oidcRefused(`its signature does not verify with the issuer's key${kid ? ` "${kid}"` : ''}`);
        }
        if (error instanceof errors.JOSEAlgNotAllowed) throw oidcRefused('it is not signed with RS256');
        if (error instanceof errors.JWKSTimeout || error instanceof errors.JWKSInvalid) {
          throw unavailable("The OIDC issuer's key set could not be read; try again later", error);
        }
        if (error instanceof errors.JOSEError) throw oidcRefused(error.message);
        throw unavailable("The OIDC issuer's key set could not be read; try again later", error);
      }
    },
    async spend({ issuer, claims }) {
      const parsed = OnceSchema.safeParse(claims);
      if (!parsed.success) {
        const claim = String(parsed.error.issues[0]?.path[0] ?? 'jti');
        throw oidcRefused(`the "${claim}" claim is missing or malformed (CI issuers always set it)`);
      }
      const expiresAtMs = (parsed.data.exp + toleranceSeconds) * 1000;
      if (!(await options.useJti(issuer, parsed.data.jti, expiresAtMs))) {
        throw oidcRefused('it was used before (each token is accepted once); request a new token');
      }
    },
  };
}
