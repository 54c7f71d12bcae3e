import { unauthorized } from '../http/api-error.js';

// A proof that the caller controls a repository on the code host, checked behind this one interface so
// the routes never see which kind it was. Two kinds travel in `Authorization: Bearer <token>`:
// - a CI OIDC token (trusted publishing): a JWT, three base64url parts joined by dots whose first part
//   is a JSON header naming `alg`;
// - a code-host user token: GitHub's tokens (`ghp_`, `gho_`, `ghu_`, `github_pat_`, the older 40 hex
//   digits) never hold a dot.
// So a token of the JWT form is verified as OIDC, anything else is asked to the code host.

/** What a proof is checked against. */
export interface ProofTarget {
  /** `owner/repo` the caller asks to publish or manage. */
  repository: string;
  /** Branch a publish names: an OIDC token's `ref` must be `refs/heads/<ref>`. */
  ref?: string;
}

/** Who a verified proof says the caller is, as the code host names it. */
export interface ProvenIdentity {
  proof: 'oidc' | 'token';
  /** `owner/repo` as the code host spells it now (a renamed repository answers with its new name). */
  repository: string;
  ownerLogin: string;
  /** The owner account's numeric id (survives renames; a new account on a freed login has another). */
  ownerId: number;
  repositoryId: number;
  /** For an OIDC proof, the run that asked (GitHub Actions claims); attestations name it. */
  ci?: CiRunClaims;
}

/** The claims of a verified CI OIDC token a publish records (docs/provenance.md). */
export interface CiRunClaims {
  workflowRef: string | null;
  ref: string | null;
  runId: string | null;
  runAttempt: string | null;
  sha: string | null;
  eventName: string | null;
}

export interface ProofVerifier {
  /** Resolves the identity, or throws an ApiError: 401 bad proof, 403 valid but not for this, 404, 503. */
  verify(token: string, target: ProofTarget): Promise<ProvenIdentity>;
}

const JWT_FORM = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;

/** True when the token has a JWT's form (a JSON header with `alg`). */
export function isJwt(token: string): boolean {
  if (!JWT_FORM.test(token)) return false;
  try {
    const header = JSON.parse(Buffer.from(token.split('.')[0] ?? '', 'base64url').toString('utf8'));
    return typeof header === 'object' && header !== null && typeof header.alg === 'string';
  } catch {
    return false;
  }
}

/** OIDC tokens to one verifier, user tokens to the other. */
export function createProofVerifier(verifiers: { oidc: ProofVerifier; token: ProofVerifier }): ProofVerifier {
  return {
    verify: (token, target) => (isJwt(token) ? verifiers.oidc : verifiers.token).verify(token, target),
  };
}

export const MISSING_PROOF_MESSAGE =
  'Authorization: Bearer <token> is required: a GitHub Actions OIDC token (trusted publishing) or a GitHub token with push access to the repository';

/** The bearer token of an Authorization header, or a 401 saying what is expected. */
export function bearerToken(header: string | undefined): string {
  const match = header === undefined ? null : /^Bearer[ \t]+([^\s]+)[ \t]*$/i.exec(header);
  if (!match?.[1]) throw unauthorized(MISSING_PROOF_MESSAGE);
  if (match[1].length > 16_384) throw unauthorized('The bearer token is too long to be a proof');
  return match[1];
}

/** Case-insensitive `owner/repo` equality (GitHub names ignore case). */
export function sameRepository(a: string, b: string): boolean {
  return a.toLowerCase() === b.toLowerCase();
}
