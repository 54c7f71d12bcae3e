import { createHash, createPublicKey, generateKeyPairSync, type KeyObject, verify } from 'node:crypto';
import { useTestDatabase } from '@pkgreg/db/vitest';
import { describe, expect, it } from 'vitest';
import {
  type AttestedVersion,
  attestationsOf,
  attestPendingVersions,
  BUILD_TYPE_CI_PUBLISH,
  BUILD_TYPE_CI_UPLOAD,
  BUILD_TYPE_INDEXED,
  ciUploadSourceOf,
  type DsseEnvelope,
  githubRun,
  type ProvenanceStatement,
  preAuthEncoding,
  provenanceStatement,
  registerSigningKey,
  signerFromPem,
  signStatement,
  verifyAttestation,
} from '../src/index.js';

// Provenance attestations (docs/provenance.md, "Provenance attestations"): the statement's content, the
// DSSE encoding and signature (checked with node:crypto and the spec's PAE written out here), what
// verifyAttestation catches, and the attesting pass over stored versions.

const t = useTestDatabase();
const pem = () =>
  generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
const signer = signerFromPem(pem());
const keys: ReadonlyMap<string, KeyObject> = new Map([[signer.keyId, signer.publicKey]]);
const bytes = Buffer.from('the archive');
const integrity = `sha512-${createHash('sha512').update(bytes).digest('base64')}`;
const COMMIT = 'a'.repeat(40);

const version: AttestedVersion = {
  scope: 'acme',
  name: 'pdf',
  version: '1.2.0',
  integrity,
  createdAt: new Date('2026-11-29T06:00:00Z'),
  repositoryUrl: 'https://github.com/acme/skills',
  commit: COMMIT,
  path: 'skills/pdf',
  ci: null,
};
const expected = { scope: 'acme', name: 'pdf', version: '1.2.0', integrity };

const decoded = (envelope: DsseEnvelope): ProvenanceStatement =>
  JSON.parse(Buffer.from(envelope.payload, 'base64').toString('utf8'));
/** Another payload signed by no one: the envelope keeps its signature. */
function tampered(envelope: DsseEnvelope, change: (statement: ProvenanceStatement) => void): DsseEnvelope {
  const statement = decoded(envelope);
  change(statement);
  return { ...envelope, payload: Buffer.from(JSON.stringify(statement)).toString('base64') };
}

describe('the statement', () => {
  it('an indexed version: the archive as subject, the repository, commit and path as source', () => {
    const s = provenanceStatement(version, 'https://registry.example');
    expect(s).toEqual({
      _type: 'https://in-toto.io/Statement/v1',
      subject: [
        {
          name: 'pkg:pkgreg/%40acme/pdf@1.2.0',
          digest: { sha512: createHash('sha512').update(bytes).digest('hex') },
        },
      ],
      predicateType: 'https://slsa.dev/provenance/v1',
      predicate: {
        buildDefinition: {
          buildType: BUILD_TYPE_INDEXED,
          externalParameters: {
            repository: 'https://github.com/acme/skills',
            commit: COMMIT,
            path: 'skills/pdf',
          },
          resolvedDependencies: [
            { uri: `git+https://github.com/acme/skills@${COMMIT}`, digest: { gitCommit: COMMIT } },
          ],
        },
        runDetails: {
          builder: { id: 'https://registry.example' },
          metadata: { startedOn: '2026-11-29T06:00:00.000Z' },
        },
      },
    });
  });

  it('a CI publish names the workflow, its ref and its run', () => {
    const s = provenanceStatement(
      {
        ...version,
        ci: githubRun('https://github.com', {
          workflowRef: 'acme/skills/.github/workflows/publish.yml@refs/heads/main',
          ref: 'refs/heads/main',
          runId: '123456',
          runAttempt: '2',
          sha: COMMIT,
          eventName: 'push',
        }),
      },
      'https://registry.example',
    );
    const run = 'https://github.com/acme/skills/actions/runs/123456/attempts/2';
    expect(s.predicate.buildDefinition.buildType).toBe(BUILD_TYPE_CI_PUBLISH);
    expect(s.predicate.buildDefinition.externalParameters).toEqual({
      repository: 'https://github.com/acme/skills',
      commit: COMMIT,
      path: 'skills/pdf',
      workflow: { repository: 'acme/skills', path: '.github/workflows/publish.yml', ref: 'refs/heads/main' },
      ref: 'refs/heads/main',
      run,
    });
    expect(s.predicate.buildDefinition.resolvedDependencies).toEqual([
      { uri: 'git+https://github.com/acme/skills@refs/heads/main', digest: { gitCommit: COMMIT } },
    ]);
    expect(s.predicate.runDetails.metadata.invocationId).toBe(run);
    expect(s.predicate.buildDefinition.internalParameters).toEqual({
      github: { event_name: 'push', sha: COMMIT },
    });
  });
});

describe("a CI upload's source, from its verified token", () => {
  const github = {
    repository: 'acme/skills',
    sha: COMMIT,
    ref: 'refs/tags/v1.2.0',
    workflow_ref: 'acme/skills/.github/workflows/release.yml@refs/tags/v1.2.0',
    run_id: '99',
    run_attempt: '3',
    event_name: 'release',
  };

  it("GitHub Actions: the repository on the issuer's web origin, the workflow and its run", () => {
    const source = ciUploadSourceOf('https://token.actions.githubusercontent.com', github);
    expect(source).toEqual({
      repositoryUrl: 'https://github.com/acme/skills',
      commit: COMMIT,
      run: {
        provider: 'github',
        workflow: {
          repository: 'acme/skills',
          path: '.github/workflows/release.yml',
          ref: 'refs/tags/v1.2.0',
        },
        ref: 'refs/tags/v1.2.0',
        runUrl: 'https://github.com/acme/skills/actions/runs/99/attempts/3',
        sha: COMMIT,
        eventName: 'release',
      },
    });
    // GitHub Enterprise Server signs at https://HOST/_services/token; data residency at token.actions.<sub>.ghe.com.
    expect(ciUploadSourceOf('https://git.acme.example/_services/token', github)?.repositoryUrl).toBe(
      'https://git.acme.example/acme/skills',
    );
    expect(ciUploadSourceOf('https://token.actions.acme.ghe.com', github)?.run.runUrl).toBe(
      'https://acme.ghe.com/acme/skills/actions/runs/99/attempts/3',
    );
  });

  it('GitLab CI: the project on the instance, its CI configuration and job', () => {
    const source = ciUploadSourceOf('https://gitlab.example', {
      project_path: 'group/sub/skills',
      sha: COMMIT.toUpperCase(),
      ref: 'main',
      ref_type: 'branch',
      ci_config_ref_uri: 'gitlab.example/group/sub/skills//.gitlab-ci.yml@refs/heads/main',
      job_id: '200',
      pipeline_source: 'push',
    });
    expect(source).toEqual({
      repositoryUrl: 'https://gitlab.example/group/sub/skills',
      commit: COMMIT,
      run: {
        provider: 'gitlab',
        workflow: { repository: 'group/sub/skills', path: '.gitlab-ci.yml', ref: 'refs/heads/main' },
        ref: 'refs/heads/main',
        runUrl: 'https://gitlab.example/group/sub/skills/-/jobs/200',
        sha: COMMIT,
        eventName: 'push',
      },
    });
  });

  it('names nothing without a full commit hash or a repository', () => {
    const issuer = 'https://token.actions.githubusercontent.com';
    expect(ciUploadSourceOf(issuer, { ...github, sha: undefined })).toBeNull();
    expect(ciUploadSourceOf(issuer, { ...github, sha: 'abc123' })).toBeNull();
    expect(ciUploadSourceOf(issuer, { sha: COMMIT })).toBeNull();
  });

  it('a run id that is not a number names no run (no link built from claims text)', () => {
    const source = ciUploadSourceOf('https://token.actions.githubusercontent.com', {
      ...github,
      run_id: '../../evil',
    });
    expect(source?.run.runUrl).toBeNull();
  });
});

describe('the DSSE envelope', () => {
  it("PAE is the spec's encoding", () => {
    // secure-systems-lab/dsse protocol.md: "DSSEv1" SP LEN(type) SP type SP LEN(body) SP body.
    expect(preAuthEncoding('http://example.com/HelloWorld', Buffer.from('hello world')).toString()).toBe(
      'DSSEv1 29 http://example.com/HelloWorld 11 hello world',
    );
    // Lengths are of bytes, not characters.
    expect(preAuthEncoding('t', Buffer.from('é')).toString()).toBe('DSSEv1 1 t 2 é');
  });

  it('the registry signs the PAE of the payload with its key', async () => {
    const envelope = await signStatement(provenanceStatement(version, 'https://registry.example'), signer);
    expect(envelope.payloadType).toBe('application/vnd.in-toto+json');
    expect(envelope.signatures).toHaveLength(1);
    const [signature] = envelope.signatures;
    expect(signature?.keyid).toBe(signer.keyId);
    const payload = Buffer.from(envelope.payload, 'base64');
    const pae = Buffer.concat([
      Buffer.from(`DSSEv1 28 application/vnd.in-toto+json ${payload.length} `),
      payload,
    ]);
    const key = createPublicKey(signer.publicKey.export({ type: 'spki', format: 'pem' }));
    expect(verify(null, pae, key, Buffer.from(signature?.sig ?? '', 'base64'))).toBe(true);
    expect(decoded(envelope)).toEqual(provenanceStatement(version, 'https://registry.example'));
  });
});

describe('verifyAttestation', () => {
  const attest = () => signStatement(provenanceStatement(version, 'https://registry.example'), signer);

  it('accepts the attestation of the version from the repository and commit expected', async () => {
    const check = verifyAttestation(await attest(), keys, {
      ...expected,
      repository: 'Acme/Skills',
      commit: COMMIT.toUpperCase(),
    });
    expect(check.ok).toBe(true);
    expect(
      verifyAttestation(await attest(), keys, {
        ...expected,
        repository: 'https://github.com/acme/skills.git',
      }).ok,
    ).toBe(true);
  });

  it('catches another commit', async () => {
    const check = verifyAttestation(await attest(), keys, { ...expected, commit: 'b'.repeat(40) });
    expect(check).toEqual({
      ok: false,
      problem: `@acme/pdf@1.2.0: the attestation says it was built from commit ${COMMIT}, not ${'b'.repeat(40)}`,
    });
  });

  it('catches another repository', async () => {
    const check = verifyAttestation(await attest(), keys, { ...expected, repository: 'evil/skills' });
    expect(check).toEqual({
      ok: false,
      problem:
        '@acme/pdf@1.2.0: the attestation says it was built from repository https://github.com/acme/skills, not evil/skills',
    });
  });

  it('catches a tampered payload: a commit rewritten under the old signature', async () => {
    const forged = tampered(await attest(), (s) => {
      s.predicate.buildDefinition.externalParameters.commit = 'b'.repeat(40);
    });
    const check = verifyAttestation(forged, keys, { ...expected, commit: 'b'.repeat(40) });
    expect(check.ok).toBe(false);
    expect(!check.ok && check.problem).toMatch(
      /signature by SHA256:.* does not verify: its statement was altered/,
    );
  });

  it('catches an unknown key', async () => {
    const other = signerFromPem(pem());
    const envelope = await signStatement(provenanceStatement(version, 'https://registry.example'), other);
    const check = verifyAttestation(envelope, keys, expected);
    expect(check).toEqual({
      ok: false,
      problem: `@acme/pdf@1.2.0: the attestation is signed by ${other.keyId}, which the registry does not publish`,
    });
    // A known key id on a signature by another key does not verify either.
    const relabelled = {
      ...envelope,
      signatures: [{ keyid: signer.keyId, sig: envelope.signatures[0]?.sig ?? '' }],
    };
    expect(verifyAttestation(relabelled, keys, expected).ok).toBe(false);
  });

  it("catches another version's attestation and other bytes", async () => {
    const envelope = await attest();
    const otherVersion = verifyAttestation(envelope, keys, { ...expected, version: '1.3.0' });
    expect(!otherVersion.ok && otherVersion.problem).toBe(
      '@acme/pdf@1.3.0: the attestation is about pkg:pkgreg/%40acme/pdf@1.2.0, not pkg:pkgreg/%40acme/pdf@1.3.0',
    );
    const otherBytes = `sha512-${createHash('sha512').update('other').digest('base64')}`;
    const digest = verifyAttestation(envelope, keys, { ...expected, integrity: otherBytes });
    expect(!digest.ok && digest.problem).toMatch(/subject digest differs from the archive's integrity/);
  });
});

describe('attestPendingVersions', () => {
  async function addVersion(
    name: string,
    values: { commit: string | null; repoUrl: string | null; visibility?: 'public' | 'private' },
  ) {
    const pkg = await t.db
      .insertInto('packages')
      .values({
        scope: 'acme',
        name,
        source_repo: 'acme/skills',
        source_path: `skills/${name}`,
        repo_owner: 'acme',
        repo_url: values.repoUrl,
        skill_md_raw: `---\nname: ${name}\n---\n`,
        frontmatter: '{}',
        visibility: values.visibility ?? 'public',
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    const sha256 = createHash('sha256').update(name).digest('hex');
    await t.db
      .insertInto('content_blobs')
      .values({ sha256, git_sha1: sha256.slice(0, 40), size: bytes.length, bytes })
      .execute();
    const v = await t.db
      .insertInto('package_versions')
      .values({
        package_id: pkg.id,
        version: '1.0.0',
        digest: `sha256:${name}`,
        integrity,
        archive_sha256: sha256,
        file_count: 1,
        total_bytes: bytes.length,
        source_commit: values.commit,
        warnings: '[]',
        created_at: new Date('2026-11-29T06:00:00Z'),
        risk: 'none',
        findings: '[]',
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    return v.id;
  }

  it('attests versions built from a known commit of a hosted repository, private ones too, once', async () => {
    await registerSigningKey(t.db, signer);
    const indexed = await addVersion('indexed', {
      commit: COMMIT,
      repoUrl: 'https://github.com/acme/skills',
    });
    const hidden = await addVersion('hidden', {
      commit: COMMIT,
      repoUrl: 'https://github.com/acme/skills',
      visibility: 'private',
    });
    const upload = await addVersion('upload', { commit: null, repoUrl: null });
    const local = await addVersion('local', { commit: COMMIT, repoUrl: null });
    expect(await attestPendingVersions(t.db, signer, { builderId: 'https://registry.example' })).toBe(2);
    expect(await attestPendingVersions(t.db, signer, { builderId: 'https://registry.example' })).toBe(0);
    for (const id of [upload, local]) expect(await attestationsOf(t.db, id)).toEqual([]);
    for (const [id, name] of [
      [indexed, 'indexed'],
      [hidden, 'hidden'],
    ] as const) {
      const [attestation] = await attestationsOf(t.db, id);
      expect(attestation?.predicateType).toBe('https://slsa.dev/provenance/v1');
      const check = verifyAttestation(attestation?.envelope as DsseEnvelope, keys, {
        ...expected,
        name,
        version: '1.0.0',
        repository: 'acme/skills',
        commit: COMMIT,
      });
      expect(check.ok).toBe(true);
      expect(check.ok && check.statement.predicate.buildDefinition.externalParameters.path).toBe(
        `skills/${name}`,
      );
    }
  });

  it("attests a CI upload from its token's source as an upload, not as a build by the registry", async () => {
    await registerSigningKey(t.db, signer);
    const uploaded = await addVersion('uploaded', { commit: null, repoUrl: null });
    const source = ciUploadSourceOf('https://token.actions.githubusercontent.com', {
      repository: 'acme/tools',
      sha: COMMIT,
      ref: 'refs/heads/main',
      workflow_ref: 'acme/tools/.github/workflows/publish.yml@refs/heads/main',
      run_id: '7',
      run_attempt: '1',
      event_name: 'push',
    });
    if (!source) throw new Error('no source');
    await t.db
      .insertInto('version_ci_uploads')
      .values({
        version_id: uploaded,
        issuer: 'https://token.actions.githubusercontent.com',
        repository_url: source.repositoryUrl,
        commit: source.commit,
        path: 'skills/uploaded',
        run: JSON.stringify(source.run),
      })
      .execute();
    expect(await attestPendingVersions(t.db, signer, { builderId: 'https://registry.example' })).toBe(1);
    const [attestation] = await attestationsOf(t.db, uploaded);
    const check = verifyAttestation(attestation?.envelope as DsseEnvelope, keys, {
      ...expected,
      name: 'uploaded',
      version: '1.0.0',
      repository: 'acme/tools',
      commit: COMMIT,
    });
    expect(check.ok).toBe(true);
    if (!check.ok) return;
    const definition = check.statement.predicate.buildDefinition;
    expect(definition.buildType).toBe(BUILD_TYPE_CI_UPLOAD);
    expect(definition.externalParameters).toEqual({
      repository: 'https://github.com/acme/tools',
      commit: COMMIT,
      path: 'skills/uploaded',
      workflow: { repository: 'acme/tools', path: '.github/workflows/publish.yml', ref: 'refs/heads/main' },
      ref: 'refs/heads/main',
      run: 'https://github.com/acme/tools/actions/runs/7/attempts/1',
    });
    // Another repository is caught.
    const other = verifyAttestation(attestation?.envelope as DsseEnvelope, keys, {
      ...expected,
      name: 'uploaded',
      version: '1.0.0',
      repository: 'acme/skills',
    });
    expect(!other.ok && other.problem).toMatch(
      /built from repository https:\/\/github\.com\/acme\/tools, not acme\/skills/,
    );
  });

  it('refuses a key that was not published', async () => {
    await expect(
      attestPendingVersions(t.db, signerFromPem(pem()), { builderId: 'https://registry.example' }),
    ).rejects.toThrow(/is not published/);
  });
});
