import type { KeyObject } from 'node:crypto';
import type { RegistrySigner } from './signer.js';
import { verifySignature } from './signer.js';

// Provenance attestations (issue 30; docs/provenance.md, "Provenance attestations"): where a version
// came from, as an in-toto Statement v1 whose predicate is SLSA provenance v1, in a DSSE envelope signed
// with the registry's Ed25519 key. The formats are the ones npm provenance and GitHub's attestations
// use, so any DSSE tool verifies them; the signature covers the DSSE pre-authentication encoding, which
// `openssl pkeyutl -verify -rawin` checks with the key of GET /api/keys.

export const IN_TOTO_STATEMENT_TYPE = 'https://in-toto.io/Statement/v1';
export const SLSA_PROVENANCE_TYPE = 'https://slsa.dev/provenance/v1';
export const IN_TOTO_PAYLOAD_TYPE = 'application/vnd.in-toto+json';
/** Build types (TypeURIs: identifiers, not addresses): the registry built the archive from a commit. */
export const BUILD_TYPE_INDEXED = 'https://pkgreg.dev/provenance/indexed/v1';
/** As indexed, and the publish was asked by a CI run whose OIDC token the registry verified. */
export const BUILD_TYPE_CI_PUBLISH = 'https://pkgreg.dev/provenance/ci-publish/v1';
/**
 * Uploaded by a CI run whose OIDC token the registry verified: the token names the repository and commit
 * the job ran on, the archive is what the job sent (what npm's provenance vouches for a CI build).
 */
export const BUILD_TYPE_CI_UPLOAD = 'https://pkgreg.dev/provenance/ci-upload/v1';

/** The CI run behind a version, from its verified OIDC token (ci-claims.ts reads GitHub's and GitLab's). */
export interface CiRun {
  /** Which CI: `internalParameters` holds its facts under this key. */
  provider: 'github' | 'gitlab';
  /** The workflow file (GitHub) or CI configuration (GitLab) the job ran, with the ref it came from. */
  workflow: { repository: string; path: string; ref: string } | null;
  /** The ref the run was on (`refs/heads/main`). */
  ref: string | null;
  /** The run's web page: the statement's `run` and `invocationId`. */
  runUrl: string | null;
  /** The commit the run was on; the indexed commit may be newer if the branch moved. */
  sha: string | null;
  /** What started the run (`push`, `release`, a GitLab pipeline source). */
  eventName: string | null;
}

/** What an attestation states about one version. */
export interface AttestedVersion {
  scope: string;
  name: string;
  version: string;
  /** SRI sha512 of the version's archive. */
  integrity: string;
  createdAt: Date;
  /** The repository's web URL (`https://github.com/owner/repo`). */
  repositoryUrl: string;
  /** The full commit hash the version was built from. */
  commit: string;
  /** The skill's folder in the repository ('' for the root). */
  path: string;
  ci: CiRun | null;
  /** The archive was uploaded by the CI run (`ci`), not built by the registry from the commit. */
  uploaded?: boolean;
}

export interface ResourceDescriptor {
  uri?: string;
  name?: string;
  digest: Record<string, string>;
}

export interface ProvenanceStatement {
  _type: typeof IN_TOTO_STATEMENT_TYPE;
  subject: Array<{ name: string; digest: { sha512: string } }>;
  predicateType: typeof SLSA_PROVENANCE_TYPE;
  predicate: {
    buildDefinition: {
      buildType: string;
      externalParameters: {
        repository: string;
        commit: string;
        path: string;
        workflow?: { ref: string; repository: string; path: string };
        ref?: string | null;
        run?: string;
      };
      internalParameters?: Record<string, unknown>;
      resolvedDependencies: ResourceDescriptor[];
    };
    runDetails: {
      builder: { id: string };
      metadata: { invocationId?: string; startedOn: string };
    };
  };
}

export interface DsseEnvelope {
  payloadType: string;
  /** Base64 of the serialized statement. */
  payload: string;
  signatures: Array<{ keyid: string; sig: string }>;
}

/** The subject name of a version: its purl (`pkg:pkgreg/%40scope/name@version`). */
export function subjectName(scope: string, name: string, version: string): string {
  return `pkg:pkgreg/%40${encodeURIComponent(scope)}/${encodeURIComponent(name)}@${encodeURIComponent(version)}`;
}

/** The hex sha512 an SRI `sha512-<base64>` names; undefined for another form. */
export function sha512HexOf(integrity: string): string | undefined {
  const match = /^sha512-([A-Za-z0-9+/]{86}==)$/.exec(integrity);
  return match?.[1] ? Buffer.from(match[1], 'base64').toString('hex') : undefined;
}

/** GitHub Actions claims (a publish run's oidc_* columns, a token's) as a run on the web origin `origin`. */
export function githubRun(
  origin: string,
  claims: {
    workflowRef: string | null;
    ref: string | null;
    runId: string | null;
    runAttempt: string | null;
    sha: string | null;
    eventName: string | null;
  },
): CiRun {
  const workflow = claims.workflowRef ? workflowOfRef(claims.workflowRef, '/') : null;
  const digits = (value: string | null) => value !== null && /^\d{1,20}$/.test(value);
  const attempt = digits(claims.runAttempt) ? `/attempts/${claims.runAttempt}` : '';
  return {
    provider: 'github',
    workflow,
    ref: claims.ref,
    runUrl:
      workflow && digits(claims.runId)
        ? `${origin}/${workflow.repository}/actions/runs/${claims.runId}${attempt}`
        : null,
    sha: claims.sha,
    eventName: claims.eventName,
  };
}

/**
 * A workflow reference split: GitHub's `owner/repo/.github/workflows/x.yml@ref` (`separator` '/', the
 * repository being its first two parts) or GitLab's `host/group/project//.gitlab-ci.yml@ref` ('//').
 */
export function workflowOfRef(
  value: string,
  separator: '/' | '//',
): { repository: string; path: string; ref: string } | null {
  const at = value.lastIndexOf('@');
  const withoutRef = at === -1 ? value : value.slice(0, at);
  const ref = at === -1 ? '' : value.slice(at + 1);
  if (separator === '//') {
    const split = withoutRef.indexOf('//');
    if (split === -1) return null;
    // The host is the first part; the project is the rest, subgroups included.
    const project = withoutRef.slice(0, split).split('/').slice(1).join('/');
    const path = withoutRef.slice(split + 2);
    return project && path ? { repository: project, path, ref } : null;
  }
  const [owner = '', repo = '', ...path] = withoutRef.split('/');
  return owner && repo && path.length > 0
    ? { repository: `${owner}/${repo}`, path: path.join('/'), ref }
    : null;
}

/** The in-toto statement of a version (`builderId`: the registry's public URL). */
export function provenanceStatement(v: AttestedVersion, builderId: string): ProvenanceStatement {
  const sha512 = sha512HexOf(v.integrity);
  if (!sha512) throw new Error(`@${v.scope}/${v.name}@${v.version} has no sha512 integrity`);
  const repositoryUrl = v.repositoryUrl.replace(/\/+$/, '');
  const commit = v.commit.toLowerCase();
  const ci = v.ci;
  const invocationId = ci?.runUrl ?? undefined;
  const buildType = v.uploaded ? BUILD_TYPE_CI_UPLOAD : ci ? BUILD_TYPE_CI_PUBLISH : BUILD_TYPE_INDEXED;
  return {
    _type: IN_TOTO_STATEMENT_TYPE,
    subject: [{ name: subjectName(v.scope, v.name, v.version), digest: { sha512 } }],
    predicateType: SLSA_PROVENANCE_TYPE,
    predicate: {
      buildDefinition: {
        buildType,
        externalParameters: {
          repository: repositoryUrl,
          commit,
          path: v.path,
          ...(ci
            ? {
                ...(ci.workflow ? { workflow: ci.workflow } : {}),
                ref: ci.ref,
                ...(invocationId ? { run: invocationId } : {}),
              }
            : {}),
        },
        ...(ci ? { internalParameters: { [ci.provider]: { event_name: ci.eventName, sha: ci.sha } } } : {}),
        resolvedDependencies: [
          { uri: `git+${repositoryUrl}@${ci?.ref ?? commit}`, digest: { gitCommit: commit } },
        ],
      },
      runDetails: {
        builder: { id: builderId },
        metadata: { ...(invocationId ? { invocationId } : {}), startedOn: v.createdAt.toISOString() },
      },
    },
  };
}

/** DSSE's pre-authentication encoding: `DSSEv1 <len(type)> <type> <len(payload)> <payload>`. */
export function preAuthEncoding(payloadType: string, payload: Uint8Array): Buffer {
  const type = Buffer.from(payloadType, 'utf8');
  return Buffer.concat([
    Buffer.from(`DSSEv1 ${type.length} `, 'utf8'),
    type,
    Buffer.from(` ${payload.length} `, 'utf8'),
    payload,
  ]);
}

/** The statement in a DSSE envelope signed by the registry. */
export async function signStatement(
  statement: ProvenanceStatement,
  signer: RegistrySigner,
): Promise<DsseEnvelope> {
  const payload = Buffer.from(JSON.stringify(statement), 'utf8');
  const sig = await signer.sign(preAuthEncoding(IN_TOTO_PAYLOAD_TYPE, payload));
  return {
    payloadType: IN_TOTO_PAYLOAD_TYPE,
    payload: payload.toString('base64'),
    signatures: [{ keyid: signer.keyId, sig: sig.toString('base64') }],
  };
}

/** What the verifier expects of an attestation: the version, and where it should come from. */
export interface ExpectedProvenance {
  scope: string;
  name: string;
  version: string;
  /** The version's SRI sha512 integrity (from the lockfile or the version record). */
  integrity: string;
  /** `owner/repo` or the repository's URL; checked when given. */
  repository?: string;
  /** The full commit hash; checked when given. */
  commit?: string;
}

export type AttestationCheck = { ok: true; statement: ProvenanceStatement } | { ok: false; problem: string };

/** `https://github.com/Acme/Skills.git` and `acme/skills` → `acme/skills`: a repository compared by name. */
function repositoryKey(value: string): string {
  let path = value.trim();
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(path)) {
    try {
      path = new URL(path.replace(/^git\+/, '')).pathname;
    } catch {
      return path.toLowerCase();
    }
  }
  return path
    .replace(/^\/+|\/+$/g, '')
    .replace(/\.git$/, '')
    .toLowerCase();
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * Checks an attestation of a version: signed by one of `publicKeys` (keyid → Ed25519 key) over the DSSE
 * encoding, an in-toto statement of SLSA provenance about exactly this archive, from the repository and
 * commit expected. The problem names what differs, for a person to read.
 */
export function verifyAttestation(
  envelope: DsseEnvelope,
  publicKeys: ReadonlyMap<string, KeyObject>,
  expected: ExpectedProvenance,
): AttestationCheck {
  const label = `@${expected.scope}/${expected.name}@${expected.version}`;
  const fail = (problem: string): AttestationCheck => ({ ok: false, problem: `${label}: ${problem}` });
  if (envelope.payloadType !== IN_TOTO_PAYLOAD_TYPE)
    return fail(`the attestation's payload type is ${envelope.payloadType}, not ${IN_TOTO_PAYLOAD_TYPE}`);
  const payload = Buffer.from(envelope.payload, 'base64');
  const signatures = Array.isArray(envelope.signatures) ? envelope.signatures : [];
  const known = signatures.filter((s) => publicKeys.has(s.keyid));
  if (known.length === 0) {
    const named = signatures.map((s) => s.keyid).join(', ') || 'no key';
    return fail(`the attestation is signed by ${named}, which the registry does not publish`);
  }
  const pae = preAuthEncoding(envelope.payloadType, payload);
  const verified = known.some((s) => {
    const key = publicKeys.get(s.keyid);
    return key !== undefined && verifySignature(key, pae, Buffer.from(s.sig, 'base64'));
  });
  if (!verified)
    return fail(
      `the attestation's signature by ${known[0]?.keyid} does not verify: its statement was altered, or the signature belongs to another`,
    );
  let statement: unknown;
  try {
    statement = JSON.parse(payload.toString('utf8'));
  } catch {
    return fail('the attestation is signed but its payload is not JSON');
  }
  if (!isRecord(statement) || statement._type !== IN_TOTO_STATEMENT_TYPE)
    return fail(`the attestation is not an in-toto statement (${IN_TOTO_STATEMENT_TYPE})`);
  if (statement.predicateType !== SLSA_PROVENANCE_TYPE)
    return fail(`the attestation's predicate is ${String(statement.predicateType)}, not SLSA provenance`);
  const s = statement as unknown as ProvenanceStatement;
  const subject = Array.isArray(s.subject) ? s.subject[0] : undefined;
  const wantName = subjectName(expected.scope, expected.name, expected.version);
  if (subject?.name !== wantName)
    return fail(`the attestation is about ${String(subject?.name)}, not ${wantName}`);
  const wantDigest = sha512HexOf(expected.integrity);
  if (!wantDigest || subject.digest?.sha512 !== wantDigest)
    return fail(
      `the attestation's subject digest differs from the archive's integrity ${expected.integrity}: it attests other bytes`,
    );
  const params = isRecord(s.predicate?.buildDefinition?.externalParameters)
    ? s.predicate.buildDefinition.externalParameters
    : undefined;
  if (!params) return fail('the attestation names no source (externalParameters)');
  if (
    expected.repository !== undefined &&
    repositoryKey(params.repository) !== repositoryKey(expected.repository)
  )
    return fail(
      `the attestation says it was built from repository ${params.repository}, not ${expected.repository}`,
    );
  if (expected.commit !== undefined && String(params.commit).toLowerCase() !== expected.commit.toLowerCase())
    return fail(`the attestation says it was built from commit ${params.commit}, not ${expected.commit}`);
  return { ok: true, statement: s };
}
