import { SCOPES } from '@pkgreg/contracts';
import {
  type Delegation,
  type KeptAssertion,
  createDelegationAssertions as signedWith,
} from '@pkgreg/server-kit';
import { LRUCache } from 'lru-cache';
import type { KeyStore } from '../oauth/signing-keys.service.js';
import type { AuthInfo } from '../oauth/verify-token.js';

// How the edge reads the registry as the person an app acts for (docs/accounts.md, "Reading through
// the MCP edge"): the assertion itself is signed by @pkgreg/server-kit (the runtime worker signs the same
// way for an agent run); here is who gets one, and the edge's delegation keys and cache. One is kept per (person,
// app) and signed again when under 30 s are left, so a busy app costs one signature every 90 s.

export { DELEGATION_TYP } from '@pkgreg/server-kit';

export interface DelegationAssertions {
  /**
   * The assertion to read the registry as the caller's person: for a token of the edge's own issuer
   * delegated by a person (`sub` an account, not the client) with pkgreg.registry.read. Undefined for
   * anyone else (a client acting for itself, a trusted issuer's token), who reads anonymously.
   */
  of(auth: AuthInfo): Promise<string> | undefined;
  /**
   * The person and app `of` would sign for, or undefined: what an agent.invoke job carries so the runtime
   * worker reads the registry as that person too (docs/agent.md, "Privacy"). An identity, never a token.
   */
  delegationOf(auth: AuthInfo): Delegation | undefined;
}

export interface DelegationAssertionsOptions {
  /** The delegation keys (createKeyStore with purpose `delegation`), never the access tokens' keys. */
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
  const assertions = signedWith({
    signingKey: () => keyStore.signingKey(),
    issuer,
    audience,
    kept: new LRUCache<string, KeptAssertion>({ max: options.max ?? 10_000 }),
  });

  function delegationOf(auth: AuthInfo): Delegation | undefined {
    const { subject, clientId } = auth;
    if (
      subject === undefined ||
      subject === clientId ||
      auth.issuer !== issuer ||
      !auth.scopes.includes(SCOPES.registryRead)
    )
      return undefined;
    return { subject, clientId };
  }

  return {
    delegationOf,
    of(auth) {
      const delegation = delegationOf(auth);
      return delegation && assertions.for(delegation);
    },
  };
}
