import type { Db } from '@pkgreg/db';
import { type CryptoKey, importJWK, type JWK, type JWTHeaderParameters, jwtVerify } from 'jose';
import { unauthorized } from '../http/api-error.js';
import { isDelegationLive, listEdgeDelegationKeys } from './delegation.repository.js';

// A person's reads through the MCP edge (docs/accounts.md, "Reading through the MCP edge"): the edge
// never passes an app's token on (MCP forbids token passthrough, docs/decisions.md); it signs an
// assertion of its own, short-lived and for this registry only, naming the account and the app:
//   header {alg: ES256, kid, typ: pkgreg-delegation+jwt}
//   claims {iss: <EDGE_PUBLIC_BASE_URL>/mcp, aud: <REGISTRY_PUBLIC_URL>, sub: <account id>,
//           client_id: <the app>, iat, exp <= iat + 300}
// signed with one of the edge's delegation keys (edge_delegation_keys, shared database; never the keys of
// its access tokens: docs/decisions.md, "Delegation keys"). It counts only while the
// person's delegation to the app is live and the account is not suspended, both read on every request,
// so a revocation or a suspension stops it at once. Every refusal is the same 401.

export const DELEGATION_TYP = 'pkgreg-delegation+jwt';
/** The longest an assertion may be valid for (`exp - iat`, seconds). */
export const DELEGATION_MAX_SECONDS = 300;
/** Clocks of the edge and the registry may differ this much (seconds). */
const CLOCK_TOLERANCE_SECONDS = 30;
const ALG = 'ES256';
/** The one answer to any assertion that does not count, whatever the reason. */
export const DELEGATION_REFUSED = 'The delegation is not valid on this registry';

/** A compact JWS; the signature may be empty (`alg: none`), to be refused rather than ignored. */
const JWT_BEARER = /^bearer[ \t]+(([A-Za-z0-9_-]+)\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*)[ \t]*$/i;

/** A JOSE `typ` as jose compares it: media types are case-insensitive, `application/` implied. */
const normalizedTyp = (typ: string) => {
  const lower = typ.toLowerCase();
  return lower.includes('/') ? lower : `application/${lower}`;
};
/**
 * The header types that make a bearer JWT the registry's to judge: an assertion, and an OAuth access
 * token (RFC 9068, such as the edge's own) sent here in place of one, which is refused rather than read
 * as no credentials. A CI OIDC token (`typ: JWT`) stays a publishing proof.
 */
const OWN_TYPES = new Set([normalizedTyp(DELEGATION_TYP), normalizedTyp('at+jwt')]);

/** The JWT of `Authorization: Bearer <jwt>` when its header says it is an assertion (or an access token). */
export function delegationBearerOf(authorization: string | undefined): string | undefined {
  if (authorization === undefined) return undefined;
  const match = JWT_BEARER.exec(authorization);
  if (!match?.[1] || !match[2]) return undefined;
  let typ: unknown;
  try {
    typ = JSON.parse(Buffer.from(match[2], 'base64url').toString('utf8'))?.typ;
  } catch {
    return undefined;
  }
  if (typeof typ !== 'string' || !OWN_TYPES.has(normalizedTyp(typ))) return undefined;
  return match[1];
}

/** Who an assertion that counts acts for, and through which app. */
export interface Delegation {
  accountId: string;
  clientId: string;
}

export interface DelegationVerifier {
  /** The delegation an assertion carries; rejects with the one 401 ApiError when it does not count. */
  verify(assertion: string): Promise<Delegation>;
}

export interface DelegationVerifierOptions {
  /** The edge's public base URL (EDGE_PUBLIC_BASE_URL): its issuer is `<base>/mcp`. Unset: all refused. */
  edgeBaseUrl: string | undefined;
  /** This registry's public URL: the only audience accepted. */
  audience: string;
  /** The edge's keys are read again at most this often (default 30 s)… */
  reloadEveryMs?: number;
  /** …and on an unknown `kid`, at most once per this gap (default 1 s). */
  minReloadGapMs?: number;
}

/** The edge's keys could not be read (the database is down): not the assertion's fault. */
class KeysUnreadable extends Error {}

export function createDelegationVerifier(db: Db, options: DelegationVerifierOptions): DelegationVerifier {
  const issuer = options.edgeBaseUrl === undefined ? undefined : `${options.edgeBaseUrl}/mcp`;
  const reloadEveryMs = options.reloadEveryMs ?? 30_000;
  const minReloadGapMs = options.minReloadGapMs ?? 1_000;
  let keys = new Map<string, CryptoKey>();
  let loadedAt = Number.NEGATIVE_INFINITY;
  let loading: Promise<void> | undefined;
  const refused = () => unauthorized(DELEGATION_REFUSED);

  async function load(): Promise<void> {
    const next = new Map<string, CryptoKey>();
    for (const row of await listEdgeDelegationKeys(db)) {
      if (row.alg !== ALG) continue;
      // A key that does not import verifies nothing; the others still do.
      const key = await importJWK(row.public_jwk as JWK, ALG).catch(() => undefined);
      if (key) next.set(row.kid, key as CryptoKey);
    }
    keys = next;
    loadedAt = Date.now();
  }

  function reload(): Promise<void> {
    loading ??= load()
      .catch((error: unknown) => {
        throw new KeysUnreadable('the edge delegation keys could not be read', { cause: error });
      })
      .finally(() => {
        loading = undefined;
      });
    return loading;
  }

  async function keyOf(header: JWTHeaderParameters): Promise<CryptoKey> {
    if (Date.now() - loadedAt > reloadEveryMs) await reload();
    let key = header.kid === undefined ? undefined : keys.get(header.kid);
    if (!key && header.kid !== undefined && Date.now() - loadedAt > minReloadGapMs) {
      await reload();
      key = keys.get(header.kid);
    }
    if (!key) throw refused();
    return key;
  }

  return {
    async verify(assertion) {
      if (issuer === undefined) throw refused();
      let claims: Record<string, unknown>;
      try {
        ({ payload: claims } = await jwtVerify(assertion, keyOf, {
          issuer,
          audience: options.audience,
          algorithms: [ALG],
          typ: DELEGATION_TYP,
          requiredClaims: ['iat', 'exp', 'sub', 'client_id'],
          maxTokenAge: DELEGATION_MAX_SECONDS,
          clockTolerance: CLOCK_TOLERANCE_SECONDS,
        }));
      } catch (error) {
        // Keys that could not be read are an outage (a 503), never a 401; anything else the assertion
        // did, however malformed, is the one refusal.
        if (error instanceof KeysUnreadable) throw error.cause;
        throw refused();
      }
      const { sub, client_id: clientId, iat, exp } = claims;
      if (typeof sub !== 'string' || sub === '' || typeof clientId !== 'string' || clientId === '')
        throw refused();
      if (typeof iat !== 'number' || typeof exp !== 'number' || exp - iat > DELEGATION_MAX_SECONDS)
        throw refused();
      // An app acting for itself (client credentials) has no person to read as.
      if (sub === clientId) throw refused();
      if (!(await isDelegationLive(db, sub, clientId))) throw refused();
      return { accountId: sub, clientId };
    },
  };
}
