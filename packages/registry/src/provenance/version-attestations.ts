import type { Db } from '@pkgreg/db';
import { sql } from 'kysely';
import {
  type CiRun,
  type DsseEnvelope,
  githubRun,
  provenanceStatement,
  SLSA_PROVENANCE_TYPE,
  signStatement,
} from './attestations.js';
import { withCurrentKey } from './signatures.js';
import type { RegistrySigner } from './signer.js';

// Stored attestations (docs/provenance.md, "Provenance attestations"): the signer beside the API attests
// every version built from a known commit of a hosted repository, private ones too (the endpoint shows
// an attestation only to a reader who may read the version). A version the registry indexed for a CI
// publish names the workflow run from the publish's verified OIDC token: its publish run is found through
// the indexing run that created the version, so while a publish of its repository is still running the
// version waits (its publish run learns its indexing run only when it finishes). A version a trusted
// publisher's CI job uploaded is attested from what the job's token said (version_ci_uploads).

/** Advisory lock of the attesting pass: one process attests at a time, the others skip their turn. */
const ATTESTING_LOCK_KEY = 0x706b_6174; // "pkat"
/** A publish run not finished after this long is taken as lost: its versions are attested as indexed. */
const PUBLISH_RUN_WAIT = '1 hour';

/**
 * Attests up to `limit` versions the signer's key has not attested, oldest first; how many it attested,
 * or null when another process holds the lock. Versions without a source commit or repository URL (an
 * upload by token, a local clone) have nothing to attest.
 */
export async function attestPendingVersions(
  db: Db,
  signer: RegistrySigner,
  options: { limit?: number; builderId: string },
): Promise<number | null> {
  const limit = options.limit ?? 500;
  return withCurrentKey(db, signer, ATTESTING_LOCK_KEY, async (trx) => {
    const pending = await trx
      .selectFrom('package_versions as v')
      .innerJoin('packages as p', 'p.id', 'v.package_id')
      .leftJoin('indexing_runs as ir', 'ir.id', 'v.indexing_run_id')
      .leftJoin('version_ci_uploads as cu', 'cu.version_id', 'v.id')
      .leftJoin('publish_runs as pr', (join) =>
        join
          .onRef('pr.indexing_run_id', '=', 'v.indexing_run_id')
          .on('pr.proof', '=', 'oidc')
          .on('pr.oidc_workflow_ref', 'is not', null)
          .on('pr.oidc_run_id', 'is not', null),
      )
      .select([
        'v.id',
        'p.scope',
        'p.name',
        'v.version',
        'v.integrity',
        'v.created_at',
        'v.source_commit',
        'p.repo_url',
        'p.source_path',
        'pr.oidc_workflow_ref',
        'pr.oidc_ref',
        'pr.oidc_run_id',
        'pr.oidc_run_attempt',
        'pr.oidc_sha',
        'pr.oidc_event_name',
        'cu.repository_url as upload_repository_url',
        'cu.commit as upload_commit',
        'cu.path as upload_path',
        'cu.run as upload_run',
      ])
      .where(({ and, or, eb }) =>
        or([
          and([eb('v.source_commit', 'is not', null), eb('p.repo_url', 'is not', null)]),
          eb('cu.version_id', 'is not', null),
        ]),
      )
      .where(({ not, exists, selectFrom, or }) =>
        not(
          or([
            exists(
              selectFrom('version_attestations as a')
                .select('a.version_id')
                .whereRef('a.version_id', '=', 'v.id')
                .where('a.keyid', '=', signer.keyId),
            ),
            exists(
              selectFrom('publish_runs as waiting')
                .select('waiting.id')
                .whereRef('waiting.locator', '=', 'ir.locator')
                .where('waiting.status', 'in', ['queued', 'running'])
                .where('waiting.created_at', '>', sql<Date>`now() - ${PUBLISH_RUN_WAIT}::interval`),
            ),
          ]),
        ),
      )
      .orderBy('v.seq')
      .limit(limit)
      .execute();
    if (pending.length === 0) return 0;
    const rows = await Promise.all(
      pending.map(async (v) => {
        const version = { scope: v.scope, name: v.name, version: v.version, integrity: v.integrity };
        const createdAt = new Date(v.created_at);
        const statement = provenanceStatement(
          v.upload_repository_url && v.upload_commit && v.upload_run
            ? {
                ...version,
                createdAt,
                repositoryUrl: v.upload_repository_url,
                commit: v.upload_commit,
                path: v.upload_path ?? '',
                ci: v.upload_run as CiRun,
                uploaded: true,
              }
            : {
                ...version,
                createdAt,
                repositoryUrl: v.repo_url as string,
                commit: v.source_commit as string,
                path: v.source_path,
                ci:
                  v.oidc_workflow_ref && v.oidc_run_id
                    ? githubRun(new URL(v.repo_url as string).origin, {
                        workflowRef: v.oidc_workflow_ref,
                        ref: v.oidc_ref,
                        runId: v.oidc_run_id,
                        runAttempt: v.oidc_run_attempt,
                        sha: v.oidc_sha,
                        eventName: v.oidc_event_name,
                      })
                    : null,
              },
          options.builderId,
        );
        return {
          version_id: v.id,
          keyid: signer.keyId,
          envelope: JSON.stringify(await signStatement(statement, signer)),
        };
      }),
    );
    await trx.insertInto('version_attestations').values(rows).execute();
    return rows.length;
  });
}

/** A version's attestation as the API serves it. */
export interface VersionAttestation {
  predicateType: string;
  envelope: DsseEnvelope;
}

/** The attestations of one version, newest key first (empty when it has none). */
export async function attestationsOf(db: Db, versionId: string): Promise<VersionAttestation[]> {
  const rows = await db
    .selectFrom('version_attestations')
    .select(['envelope'])
    .where('version_id', '=', versionId)
    .orderBy('created_at', 'desc')
    .orderBy('keyid')
    .execute();
  return rows.map((r) => ({ predicateType: SLSA_PROVENANCE_TYPE, envelope: r.envelope }));
}
