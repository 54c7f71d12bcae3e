import { deriveDelegatedNamespace, deriveNamespace, RejectError } from '@pkgreg/contracts';
import { dependencyOutageOf } from '@pkgreg/server-kit';
import { createRemoteJWKSet, decodeJwt, type JWTPayload, type JWTVerifyGetKey, jwtVerify } from 'jose';
import type { TrustedIssuer } from '../env.js';
import { type KeyStore, SIGNING_ALG } from './signing-keys.service.js';

/** What the edge knows about a caller once its bearer token has been verified. */
export interface AuthInfo {
  issuer: string;
  /** `client_id` claim, else `sub`. */
  clientId: string;
  /**
   * The person a token of the edge's own authorization server acts for, when it is delegated (its `sub`
   * is an account, not the client itself); undefined for a client acting for itself.
   */
  subject: string | undefined;
  scopes: string[];
  /**
   * `app:` + sha256 hex of `<issuer>|<client_id or sub>`, or of `<issuer>|<client_id>|<sub>` for a
   * delegated token (decisions.md).
   */
  namespace: string;
  /** Seconds since the epoch. */
  expiresAt: number;
  /** Seconds since the epoch (`iat`; 0 when absent): a revocation after it ends the token. */
  issuedAt: number;
  /**
   * The MCP resources the token is for (its `aud`): admission checks the one of the request's host is
   * among them. A trusted issuer's configured audience for this edge reads as the base resource.
   */
  audiences: string[];
}

/** Admission needs only this: how a token is checked (own keys, trusted issuers, the cache) stays behind it. */
export interface TokenVerifier {
  /** Resolves the caller or throws RejectError('token_invalid'). */
  verifyAccessToken(token: string): Promise<AuthInfo>;
}

function scopesOf(payload: JWTPayload): string[] {
  if (typeof payload.scope === 'string') return payload.scope.split(' ').filter(Boolean);
  if (Array.isArray(payload.scp)) return payload.scp.filter((s): s is string => typeof s === 'string');
  return [];
}

function invalid(message: string): RejectError {
  return new RejectError('token_invalid', message);
}

interface IssuerConfig {
  issuer: string;
  audience: string;
  algorithms: string[];
  key: JWTVerifyGetKey;
  /** The header `typ` required (RFC 9068 `at+jwt` for the edge's own tokens). */
  typ?: string;
  /** Whether a `sub` other than the client names a person the client acts for (own issuer only). */
  delegates: boolean;
}

/**
 * A small LRU: Map keeps insertion order, so the first key is the least recently used. A hit moves its
 * entry to the end only when it is no longer among the most recent half: a hot token then costs one
 * lookup per request instead of a delete and a re-insert, and still cannot reach the eviction end.
 */
class TokenCache {
  private readonly map = new Map<string, { info: AuthInfo; touched: number }>();
  private clock = 0;
  constructor(private readonly max: number) {}
  get(token: string): AuthInfo | undefined {
    const hit = this.map.get(token);
    if (!hit) return undefined;
    if (hit.info.expiresAt * 1000 <= Date.now()) {
      this.map.delete(token);
      return undefined;
    }
    if (this.clock - hit.touched > this.max / 2) {
      this.map.delete(token);
      hit.touched = ++this.clock;
      this.map.set(token, hit);
    }
    return hit.info;
  }
  set(token: string, info: AuthInfo): void {
    this.map.delete(token);
    this.map.set(token, { info, touched: ++this.clock });
    if (this.map.size > this.max) this.map.delete(this.map.keys().next().value as string);
  }
}

export function createTokenVerifier(options: {
  keyStore: KeyStore;
  /** The built-in authorization server's issuer, `{base}/mcp`. */
  issuer: string;
  /** The MCP resource, `{base}/mcp`. */
  resource: string;
  trustedIssuers: TrustedIssuer[];
  cacheSize: number;
  /** Told whether each lookup hit the cache (metrics). */
  onCacheLookup?: (hit: boolean) => void;
}): TokenVerifier {
  const own: IssuerConfig = {
    issuer: options.issuer,
    audience: options.resource,
    algorithms: [SIGNING_ALG],
    key: async (header) => {
      const key = await options.keyStore.verificationKey(header.kid);
      if (!key) throw invalid('unknown signing key');
      return key;
    },
    typ: 'at+jwt',
    delegates: true,
  };
  const issuers = new Map<string, IssuerConfig>([[own.issuer, own]]);
  for (const t of options.trustedIssuers) {
    issuers.set(t.issuer, {
      issuer: t.issuer,
      audience: t.audience ?? options.resource,
      algorithms: t.algorithms,
      key: createRemoteJWKSet(new URL(t.jwksUrl)),
      // A trusted issuer's `sub` is its client: its namespaces predate delegation and stay as they are.
      delegates: false,
    });
  }
  const cache = new TokenCache(options.cacheSize);

  async function verify(token: string): Promise<AuthInfo> {
    let claimedIssuer: unknown;
    try {
      claimedIssuer = decodeJwt(token).iss;
    } catch {
      throw invalid('malformed token');
    }
    const config = typeof claimedIssuer === 'string' ? issuers.get(claimedIssuer) : undefined;
    if (!config) throw invalid('untrusted issuer');
    let payload: JWTPayload;
    try {
      // jose refuses `alg: none` and any algorithm outside the allow-list before looking up a key. The
      // audience depends on the host the token is used at, so admission checks it per request.
      ({ payload } = await jwtVerify(token, config.key, {
        issuer: config.issuer,
        algorithms: config.algorithms,
        requiredClaims: ['exp', 'iss', 'aud'],
        ...(config.typ ? { typ: config.typ } : {}),
      }));
    } catch (error) {
      // The signing keys could not be read (PostgreSQL down): the token may well be valid, so the caller
      // gets a retryable service_unavailable, never a 401 that would make it drop its token.
      if (error instanceof RejectError || dependencyOutageOf(error)) throw error;
      const code = (error as { code?: string }).code;
      throw invalid(code === 'ERR_JWT_EXPIRED' ? 'token expired' : 'token verification failed');
    }
    const clientId =
      typeof payload.client_id === 'string'
        ? payload.client_id
        : typeof payload.sub === 'string'
          ? payload.sub
          : '';
    if (!clientId) throw invalid('token names no client or subject');
    const subject =
      config.delegates && typeof payload.sub === 'string' && payload.sub !== clientId
        ? payload.sub
        : undefined;
    const aud = (Array.isArray(payload.aud) ? payload.aud : [payload.aud]).filter(
      (a): a is string => typeof a === 'string',
    );
    return {
      issuer: config.issuer,
      clientId,
      subject,
      scopes: scopesOf(payload),
      namespace:
        subject === undefined
          ? deriveNamespace(config.issuer, clientId)
          : deriveDelegatedNamespace(config.issuer, clientId, subject),
      expiresAt: payload.exp as number,
      issuedAt: typeof payload.iat === 'number' ? payload.iat : 0,
      audiences: aud.map((a) => (a === config.audience ? options.resource : a)),
    };
  }

  return {
    async verifyAccessToken(token) {
      const hit = cache.get(token);
      options.onCacheLookup?.(hit !== undefined);
      if (hit) return hit;
      const info = await verify(token);
      cache.set(token, info);
      return info;
    },
  };
}
