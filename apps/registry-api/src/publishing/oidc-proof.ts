import { z } from 'zod';
import { forbidden } from '../http/api-error.js';
import { type OidcVerifier, oidcRefused } from './oidc-verifier.js';
import { type ProofVerifier, type ProvenIdentity, sameRepository } from './proof.js';

// Trusted publishing of a repository (docs/publishing.md): a GitHub Actions OIDC token, verified by the
// registry's one OIDC verifier (oidc-verifier.ts: issuer OIDC_ISSUER, signature, audience, times), then
// its Actions claims checked against the repository published.

/** GitHub's claims a publish relies on (docs.github.com: "About security hardening with OpenID Connect"). */
const ActionsClaimsSchema = z.object({
  repository: z.string().min(1),
  repository_owner: z.string().min(1),
  repository_owner_id: z.string().regex(/^[1-9]\d{0,18}$/),
  repository_id: z.string().regex(/^[1-9]\d{0,18}$/),
  ref: z.string().optional(),
  // Recorded for the version's attestation (docs/provenance.md), never checked here.
  workflow_ref: z.string().max(1000).optional(),
  run_id: z.string().max(40).optional(),
  run_attempt: z.string().max(40).optional(),
  sha: z.string().max(64).optional(),
  event_name: z.string().max(100).optional(),
  // Each token is accepted once; GitHub's always carry a jti, so one without it is refused.
  jti: z.string().min(1).max(256),
  exp: z.number(),
});

const refused = oidcRefused;

export function createOidcProof(verifier: OidcVerifier): ProofVerifier {
  return {
    async verify(token, target): Promise<ProvenIdentity> {
      const verified = await verifier.verify(token);
      const parsed = ActionsClaimsSchema.safeParse(verified.claims);
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
      await verifier.spend(verified);
      return {
        proof: 'oidc',
        repository: claims.repository,
        ownerLogin: claims.repository_owner,
        ownerId: Number(claims.repository_owner_id),
        repositoryId: Number(claims.repository_id),
        ci: {
          workflowRef: claims.workflow_ref ?? null,
          ref: claims.ref ?? null,
          runId: claims.run_id ?? null,
          runAttempt: claims.run_attempt ?? null,
          sha: claims.sha ?? null,
          eventName: claims.event_name ?? null,
        },
      };
    },
  };
}
