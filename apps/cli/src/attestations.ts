import type { KeyObject } from 'node:crypto';
import { verifyAttestation } from '@pkgreg/registry/provenance';
import type { Context } from './context.js';
import type { PackageRef } from './names.js';
import type { RegistryKey } from './signatures.js';

// Provenance attestations as the CLI checks them (docs/provenance.md, "Verifying signatures"): the
// registry's DSSE envelope over the version's archive, from the repository and commit the lockfile
// names. Install records that one verified (`"attested": true`); from then on `verify` requires one.

/** What an attestation must say: the locked version, its bytes and, when known, its source. */
export interface AttestationExpectation {
  version: string;
  integrity: string;
  sourceRepo: string;
  sourceCommit: string | null;
}

export const ATTESTATION_MISSING =
  'attestation missing (pkgreg-lock.json says the version was attested; the registry serves no attestation of it)';

/** None served; one verified; or why none did (the first's problem, the version's label left out). */
export type AttestationResult = { kind: 'none' } | { kind: 'ok' } | { kind: 'failed'; problem: string };

export async function checkAttestations(
  ctx: Context,
  keys: ReadonlyMap<string, RegistryKey>,
  ref: PackageRef,
  expected: AttestationExpectation,
): Promise<AttestationResult> {
  const { attestations } = await ctx.client.attestations(ref.scope, ref.name, expected.version);
  if (attestations.length === 0) return { kind: 'none' };
  const publicKeys = new Map<string, KeyObject>();
  for (const key of keys.values()) if (key.publicKey) publicKeys.set(key.keyid, key.publicKey);
  const label = `${ref.full}@${expected.version}: `;
  let problem = '';
  for (const { envelope } of attestations) {
    const check = verifyAttestation(envelope, publicKeys, {
      scope: ref.scope,
      name: ref.name,
      version: expected.version,
      integrity: expected.integrity,
      // A hosted package's source is itself (`@scope/name`): its CI upload's repository is the token's.
      ...(expected.sourceRepo && !expected.sourceRepo.startsWith('@')
        ? { repository: expected.sourceRepo }
        : {}),
      ...(expected.sourceCommit ? { commit: expected.sourceCommit } : {}),
    });
    if (check.ok) return { kind: 'ok' };
    problem ||= check.problem.startsWith(label) ? check.problem.slice(label.length) : check.problem;
  }
  return { kind: 'failed', problem };
}
