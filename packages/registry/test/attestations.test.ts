import { createHash, createPublicKey, generateKeyPairSync, type KeyObject, verify } from 'node:crypto';
import { useTestDatabase } from '@pkgreg/db/vitest';
import { describe, expect, it } from 'vitest';
import {
  type AttestedVersion,
  attestationsOf,
  attestPendingVersions,
  BUILD_TYPE_CI_PUBLISH,
  BUILD_TYPE_INDEXED,
  type DsseEnvelope,
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
        ci: {
          workflowRef: 'acme/skills/.github/workflows/publish.yml@refs/heads/main',
          ref: 'refs/heads/main',
          runId: '123456',
          runAttempt: '2',
          sha: COMMIT,
          eventName: 'push',
        },
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

  it('refuses a key that was not published', async () => {
    await expect(
      attestPendingVersions(t.db, signerFromPem(pem()), { builderId: 'https://registry.example' }),
    ).rejects.toThrow(/is not published/);
  });
});
