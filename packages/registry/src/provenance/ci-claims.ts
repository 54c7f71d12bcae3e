import { type CiRun, githubRun, workflowOfRef } from './attestations.js';

// What a CI upload's verified OIDC token says of its source (docs/provenance.md, "Provenance
// attestations"): the repository, the commit the job ran on, its workflow and run, read from GitHub
// Actions' claims (`repository`, `sha`, `workflow_ref`, `run_id`, …) or GitLab CI's (`project_path`,
// `sha`, `ci_config_ref_uri`, `job_id`, …). The issuer's signature is the proof; nothing here reads the
// repository.

/** The source of a CI upload: what its attestation names. */
export interface CiUploadSource {
  /** The repository's web URL. */
  repositoryUrl: string;
  /** The full commit hash the job ran on. */
  commit: string;
  run: CiRun;
}

const text = (value: unknown): string | null =>
  typeof value === 'string' && value !== '' && value.length <= 1000 ? value : null;
const COMMIT = /^[0-9a-f]{40}(?:[0-9a-f]{24})?$/i;

/**
 * The web origin of GitHub repositories whose Actions tokens `issuer` signs: github.com for GitHub's
 * own issuer, `<sub>.ghe.com` for GitHub Enterprise Cloud with data residency, and the issuer's own
 * origin otherwise (GitHub Enterprise Server signs at `https://HOST/_services/token`).
 */
export function githubOriginOf(issuer: string): string {
  const url = new URL(issuer);
  if (url.hostname === 'token.actions.githubusercontent.com') return 'https://github.com';
  if (url.hostname.startsWith('token.actions.') && url.hostname.endsWith('.ghe.com'))
    return `https://${url.hostname.slice('token.actions.'.length)}`;
  return url.origin;
}

/** GitLab's `ref` is a bare name; `ref_path` (GitLab 16.2+) the full one. */
function gitlabRef(claims: Record<string, unknown>): string | null {
  const path = text(claims.ref_path);
  if (path) return path;
  const ref = text(claims.ref);
  if (!ref) return null;
  return text(claims.ref_type) === 'tag' ? `refs/tags/${ref}` : `refs/heads/${ref}`;
}

/** The source of a verified token's job, or null when its claims name no repository or commit. */
export function ciUploadSourceOf(issuer: string, claims: Record<string, unknown>): CiUploadSource | null {
  const sha = text(claims.sha);
  if (!sha || !COMMIT.test(sha)) return null;
  const commit = sha.toLowerCase();
  const github = text(claims.repository);
  if (github) {
    const origin = githubOriginOf(issuer);
    const run = githubRun(origin, {
      workflowRef: text(claims.workflow_ref),
      ref: text(claims.ref),
      runId: text(claims.run_id),
      runAttempt: text(claims.run_attempt),
      sha: commit,
      eventName: text(claims.event_name),
    });
    return { repositoryUrl: `${origin}/${github}`, commit, run };
  }
  const project = text(claims.project_path);
  if (project) {
    const instance = issuer.replace(/\/+$/, '');
    const config = text(claims.ci_config_ref_uri);
    const jobId = text(claims.job_id);
    return {
      repositoryUrl: `${instance}/${project}`,
      commit,
      run: {
        provider: 'gitlab',
        workflow: config ? workflowOfRef(config, '//') : null,
        ref: gitlabRef(claims),
        runUrl: jobId && /^\d+$/.test(jobId) ? `${instance}/${project}/-/jobs/${jobId}` : null,
        sha: commit,
        eventName: text(claims.pipeline_source),
      },
    };
  }
  return null;
}
