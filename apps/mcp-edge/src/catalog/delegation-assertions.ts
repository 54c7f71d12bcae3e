import { SCOPES } from '@pkgreg/contracts';
import { SignJWT } from 'jose';
import { LRUCache } from 'lru-cache';
import { type KeyStore, SIGNING_ALG } from '../oauth/signing-keys.service.js';
import type { AuthInfo } from '../oauth/verify-token.js';

// How the edge reads the registry as the person an app acts for (docs/accounts.md, "Reading through
// the MCP edge"). The app's token is never passed on (MCP forbids token passthrough, docs/decisions.md):
// the edge signs an assertion of its own with its active key, for the registry's public URL only,
// naming the account (`sub`) and the app (`client_id`); the registry checks it against the edge's keys
// and the person's delegation. One is kept per (person, app) and signed again when under 30 s are left,
// so a busy app costs one signature every 90 s.

export const DELEGATION_TYP = 'pkgreg-delegation+jwt';
const LIFETIME_SECONDS = 120;
const RENEW_BELOW_SECONDS = 30;

export interface DelegationAssertions {
  /**
   * The assertion to read the registry as the caller's person: for a token of the edge's own issuer
   * delegated by a person (`sub` an account, not the client) with pkgreg.registry.read. Undefined for
   * anyone else (a client acting for itself, a trusted issuer's token), who reads anonymously.
   */
  of(auth: AuthInfo): Promise<string> | undefined;
}

export interface DelegationAssertionsOptions {
  keyStore: KeyStore;
  /** The edge's issuer, `{base}/mcp`: the assertion's `iss`, and the only issuer whose tokens delegate. */
  issuer: string;
  /** The registry's public URL (REGISTRY_PUBLIC_URL): the assertion's `aud`. */
  audience: string;
  /** (person, app) pairs kept at most. */
  max?: number;
}

export function createDelegationAssertions(options: DelegationAssertionsOptions): DelegationAssertions {
  const { keyStore, issuer, audience } = options;
  const kept = new LRUCache<string, { assertion: string; exp: number }>({ max: options.max ?? 10_000 });
  const signing = new Map<string, Promise<string>>();

  async function sign(key: string, subject: string, clientId: string): Promise<string> {
    const signer = await keyStore.signingKey();
    const iat = Math.floor(Date.now() / 1000);
    const exp = iat + LIFETIME_SECONDS;
    const assertion = await new SignJWT({ client_id: clientId })
      .setProtectedHeader({ alg: SIGNING_ALG, kid: signer.kid, typ: DELEGATION_TYP })
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
    of(auth) {
      const { subject, clientId } = auth;
      if (
        subject === undefined ||
        subject === clientId ||
        auth.issuer !== issuer ||
        !auth.scopes.includes(SCOPES.registryRead)
      )
        return undefined;
      const key = `${subject}\n${clientId}`;
      const hit = kept.get(key);
      if (hit && hit.exp - Date.now() / 1000 >= RENEW_BELOW_SECONDS) return Promise.resolve(hit.assertion);
      let pending = signing.get(key);
      if (!pending) {
        pending = sign(key, subject, clientId).finally(() => signing.delete(key));
        signing.set(key, pending);
      }
      return pending;
    },
  };
}
