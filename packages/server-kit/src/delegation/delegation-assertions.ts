import type { Db } from '@pkgreg/db';
import { type CryptoKey, importJWK, type JWK, SignJWT } from 'jose';

// How a pkgreg service reads the registry as the person an app acts for (docs/accounts.md, "Reading
// through the MCP edge"). The app's token is never passed on (MCP forbids token passthrough,
// docs/decisions.md): the reader signs an assertion of its own with the edge's active delegation key (never
// the key of its access tokens: docs/decisions.md, "Delegation keys"), for the
// registry's public URL only, naming the account (`sub`) and the app (`client_id`); the registry checks it
// against the edge's keys and the person's delegation on every request, so a revocation counts at once.
// The edge signs for the caller of a request; the runtime worker for the person an agent.invoke job names
// (docs/agent.md, "Privacy"). Here so that neither app imports the other.

export const DELEGATION_TYP = 'pkgreg-delegation+jwt';
export const DELEGATION_ALG = 'ES256';
/** How long an assertion is valid; a rotated delegation key stays published at least this long. */
export const DELEGATION_LIFETIME_SECONDS = 120;
const RENEW_BELOW_SECONDS = 30;

/** Whom an assertion reads as: an account, and the app acting for it. An identity, never a credential. */
export interface Delegation {
  /** The account id (the delegated token's `sub`). */
  subject: string;
  /** The app (the token's `client_id`). */
  clientId: string;
}

/** The edge's delegation key: its `kid` goes in the header, so the registry finds the public half. */
export interface DelegationSigningKey {
  kid: string;
  key: CryptoKey;
}

export interface KeptAssertion {
  assertion: string;
  /** Seconds since the epoch. */
  exp: number;
}

/** Where assertions are kept per (person, app): the edge's bounded LRU, one run's own Map. */
export interface KeptAssertions {
  get(key: string): KeptAssertion | undefined;
  set(key: string, value: KeptAssertion): unknown;
}

export interface DelegationAssertions {
  /**
   * An assertion naming `delegation`, kept and signed again when under 30 s of its two minutes are left,
   * so a busy reader costs one signature every 90 s.
   */
  for(delegation: Delegation): Promise<string>;
}

export interface DelegationAssertionsOptions {
  /** The edge's active delegation key, asked when a signature is due. */
  signingKey: () => Promise<DelegationSigningKey>;
  /** The edge's issuer, `{base}/mcp`: the assertion's `iss`. */
  issuer: string;
  /** The registry's public URL (its REGISTRY_PUBLIC_URL): the assertion's `aud`. */
  audience: string;
  kept: KeptAssertions;
}

export function createDelegationAssertions(options: DelegationAssertionsOptions): DelegationAssertions {
  const { issuer, audience, kept } = options;
  const signing = new Map<string, Promise<string>>();

  async function sign(key: string, { subject, clientId }: Delegation): Promise<string> {
    const signer = await options.signingKey();
    const iat = Math.floor(Date.now() / 1000);
    const exp = iat + DELEGATION_LIFETIME_SECONDS;
    const assertion = await new SignJWT({ client_id: clientId })
      .setProtectedHeader({ alg: DELEGATION_ALG, kid: signer.kid, typ: DELEGATION_TYP })
      .setIssuer(issuer)
      .setAudience(audience)
      .setSubject(subject)
      .setIssuedAt(iat)
      .setExpirationTime(exp)
      .sign(signer.key);
    kept.set(key, { assertion, exp });
    return assertion;
  }

  return {
    for(delegation) {
      const key = `${delegation.subject}\n${delegation.clientId}`;
      const hit = kept.get(key);
      if (hit && hit.exp - Date.now() / 1000 >= RENEW_BELOW_SECONDS) return Promise.resolve(hit.assertion);
      // Callers asking at once share one signature.
      let pending = signing.get(key);
      if (!pending) {
        pending = sign(key, delegation).finally(() => signing.delete(key));
        signing.set(key, pending);
      }
      return pending;
    },
  };
}

/**
 * The edge's active delegation key (edge_delegation_keys, the shared database), for a process that signs
 * assertions without being the edge (the runtime worker). It reads that table only: the keys of the edge's
 * access tokens (oauth_signing_keys) are never needed here, and a deployment can grant the worker's role
 * no access to them. Read each time a signature is due, so a rotation reaches it at once. It never creates
 * a key: the edge does (ensureActiveKey), before any job can name a person.
 */
export async function readActiveDelegationKey(db: Db): Promise<DelegationSigningKey> {
  const row = await db
    // The edge's table, in public: a hosted tenant's worker has its tenant schema first on the search_path,
    // whose copy of the table (every table is migrated into a tenant schema) is empty.
    .withSchema('public')
    .selectFrom('edge_delegation_keys')
    .select(['kid', 'alg', 'private_jwk'])
    .where('status', '=', 'active')
    .orderBy('created_at', 'desc')
    .limit(1)
    .executeTakeFirst();
  if (!row) throw new Error('the edge has no active delegation key');
  if (row.alg !== DELEGATION_ALG)
    throw new Error(`the edge's active delegation key is ${row.alg}, not ES256`);
  const key = await importJWK(row.private_jwk as JWK, DELEGATION_ALG);
  if (key instanceof Uint8Array) throw new Error("the edge's active delegation key is not an asymmetric key");
  return { kid: row.kid, key };
}
