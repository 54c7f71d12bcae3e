import type { JWTPayload } from 'jose';

// Which CI identity an OIDC token names, and whether a package's trusted publishers name it
// (docs/publishing.md, "Trusted publishers"). The registry never reads the repository: the issuer's
// signature on the claims is the proof, so private repositories work the same.
// - GitHub Actions: `repository` (`owner/repo`), the workflow from `workflow_ref` and `job_workflow_ref`
//   (`owner/repo/.github/workflows/<file>@<ref>`; a reusable workflow counts only from the same
//   repository), `environment` when the job runs in one.
// - GitLab CI: `project_path` (`group/project`), the CI configuration from `ci_config_ref_uri`
//   (`host/group/project//<path>@<ref>`, same project only), `environment`.

export interface CiIdentity {
  issuer: string;
  /** `owner/repo` or `group/project`, as the issuer spells it. */
  repository: string;
  /** Paths of the workflow files (or CI configuration) the job runs, in the repository. */
  workflows: string[];
  environment: string | null;
  /** For messages and the audit log. */
  ref: string | null;
}

/** A trusted publisher as stored (trusted_publishers). */
export interface TrustedPublisherRow {
  id: string;
  issuer: string;
  repository: string;
  workflow: string | null;
  environment: string | null;
}

const text = (value: unknown): string | null => (typeof value === 'string' && value !== '' ? value : null);
const same = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

/** `<repository>/<path>@<ref>` → path, when the ref's repository is `repository`. */
function workflowPath(ref: string | null, repository: string, separator: '/' | '//'): string | null {
  if (!ref) return null;
  const at = ref.lastIndexOf('@');
  const withoutRef = at === -1 ? ref : ref.slice(0, at);
  if (separator === '//') {
    const split = withoutRef.indexOf('//');
    if (split === -1) return null;
    const owner = withoutRef.slice(0, split);
    // `host/group/project`: the project must be the token's own.
    if (!same(owner, repository) && !owner.toLowerCase().endsWith(`/${repository.toLowerCase()}`))
      return null;
    return withoutRef.slice(split + 2) || null;
  }
  const prefix = `${repository}/`;
  if (!same(withoutRef.slice(0, prefix.length), prefix)) return null;
  return withoutRef.slice(prefix.length) || null;
}

/** The CI identity of verified claims, or why they name none. */
export function ciIdentityOf(
  issuer: string,
  claims: JWTPayload,
): { ok: true; identity: CiIdentity } | { ok: false; reason: string } {
  const github = text(claims.repository);
  const gitlab = text(claims.project_path);
  const environment = text(claims.environment);
  const ref = text(claims.ref);
  if (github) {
    const workflows = [
      workflowPath(text(claims.workflow_ref), github, '/'),
      workflowPath(text(claims.job_workflow_ref), github, '/'),
    ].filter((path): path is string => path !== null);
    return {
      ok: true,
      identity: { issuer, repository: github, workflows: [...new Set(workflows)], environment, ref },
    };
  }
  if (gitlab) {
    const config = workflowPath(text(claims.ci_config_ref_uri), gitlab, '//');
    return {
      ok: true,
      identity: { issuer, repository: gitlab, workflows: config ? [config] : [], environment, ref },
    };
  }
  return {
    ok: false,
    reason:
      'it names no repository (GitHub Actions tokens carry "repository", GitLab CI tokens "project_path")',
  };
}

/** `publish.yml` matches any workflow file of that name; a path with `/` must be the whole path. */
function workflowMatches(wanted: string, paths: string[]): boolean {
  const want = wanted.replace(/^\.\//, '');
  return paths.some((path) => (want.includes('/') ? path === want : path.split('/').at(-1) === want));
}

export function matches(publisher: TrustedPublisherRow, identity: CiIdentity): boolean {
  if (publisher.issuer.replace(/\/+$/, '') !== identity.issuer) return false;
  if (!same(publisher.repository, identity.repository)) return false;
  if (publisher.workflow !== null && !workflowMatches(publisher.workflow, identity.workflows)) return false;
  if (publisher.environment !== null) {
    if (identity.environment === null || !same(publisher.environment, identity.environment)) return false;
  }
  return true;
}

/** The identity as a refusal and the audit log name it. */
export function describeIdentity(identity: CiIdentity): string {
  const workflow = identity.workflows[0] ? `, workflow ${identity.workflows[0]}` : '';
  const environment = identity.environment ? `, environment ${identity.environment}` : '';
  return `${identity.repository}${workflow}${environment} (issuer ${identity.issuer})`;
}
