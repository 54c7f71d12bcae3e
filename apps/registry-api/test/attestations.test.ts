import { execFile, execFileSync } from 'node:child_process';
import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import {
  RegistryKeysResponseSchema,
  VersionAttestationsResponseSchema,
  VersionDetailSchema,
} from '@pkgreg/contracts';
import { indexSource } from '@pkgreg/indexer';
import { createRepo, removeDir, skillMd, tempDir } from '@pkgreg/indexer/testing';
import {
  attestPendingVersions,
  publicKeyFromBase64,
  registerSigningKey,
  signerFromPem,
  verifyAttestation,
} from '@pkgreg/registry';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useTestRegistry } from './fixtures.js';

// Provenance attestations over HTTP (docs/provenance.md, "Provenance attestations"): GET
// …/versions/:version/attestations serves the registry's DSSE envelopes with the version's reader rules,
// a CI publish's attestation names its workflow run, and `openssl` verifies one with the published key,
// exactly as the docs show.

const t = useTestRegistry({ DETAIL_CACHE_TTL_MS: '0' });
const run = promisify(execFile);
const BUILDER = 'https://registry.test';
const signer = signerFromPem(
  generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
);
let root: string;
let repo: string;
let commit: string;

const attestationsPath = (name: string, version: string) =>
  `/api/packages/@acme/${name}/versions/${version}/attestations`;
async function attestations(name: string, version = '1.0.0') {
  const res = await request(t.app).get(attestationsPath(name, version)).expect(200);
  return VersionAttestationsResponseSchema.parse(res.body).attestations;
}
async function version(name: string, ref = '1.0.0') {
  return VersionDetailSchema.parse(
    (await request(t.app).get(`/api/packages/@acme/${name}/versions/${ref}`).expect(200)).body,
  );
}
async function publishedKeys(): Promise<Map<string, KeyObject>> {
  const { keys } = RegistryKeysResponseSchema.parse((await request(t.app).get('/api/keys').expect(200)).body);
  return new Map(keys.map((k) => [k.keyid, publicKeyFromBase64(k.key) as KeyObject]));
}

beforeAll(() => {
  root = tempDir('attestations');
  repo = createRepo(root, 'acme', 'skills', {
    'pdf/SKILL.md': skillMd(['name: pdf', 'description: Fill PDF forms.', 'version: 1.0.0']),
    'csv/SKILL.md': skillMd(['name: csv', 'description: Read CSV files.', 'version: 1.0.0']),
  });
  // A clone of a hosted repository is named after it: its versions are attestable.
  execFileSync('git', ['-C', repo, 'remote', 'add', 'origin', 'https://github.com/acme/skills.git']);
  commit = execFileSync('git', ['-C', repo, 'rev-parse', 'HEAD']).toString().trim();
});
afterAll(() => removeDir(root));

describe('GET …/versions/:version/attestations', () => {
  it('answers an empty list for a version not attested (yet)', async () => {
    await indexSource({ db: t.db }, { kind: 'git', locator: repo, owner: 'acme' });
    expect(await attestations('pdf')).toEqual([]);
    expect(await attestations('pdf', 'latest')).toEqual([]);
  });

  it("serves the registry's attestation of where the version came from", async () => {
    await registerSigningKey(t.db, signer);
    // The csv version was indexed for a CI publish: its publish run carries the verified OIDC claims.
    const runId = await t.db
      .selectFrom('package_versions')
      .select('indexing_run_id')
      .where('version', '=', '1.0.0')
      .executeTakeFirstOrThrow();
    expect(runId.indexing_run_id).not.toBeNull();
    await t.db
      .insertInto('publish_runs')
      .values({
        repository: 'acme/skills',
        locator: 'acme/skills',
        scope: 'acme',
        ref: null,
        proof: 'oidc',
        status: 'succeeded',
        indexing_run_id: runId.indexing_run_id,
        oidc_workflow_ref: 'acme/skills/.github/workflows/publish.yml@refs/heads/main',
        oidc_ref: 'refs/heads/main',
        oidc_run_id: '4242',
        oidc_run_attempt: '1',
        oidc_sha: commit,
        oidc_event_name: 'push',
      })
      .execute();
    expect(await attestPendingVersions(t.db, signer, { builderId: BUILDER })).toBe(2);
    const keys = await publishedKeys();
    for (const name of ['pdf', 'csv']) {
      const v = await version(name);
      const [attestation] = await attestations(name);
      expect(attestation?.predicateType).toBe('https://slsa.dev/provenance/v1');
      const check = verifyAttestation(attestation?.envelope as never, keys, {
        scope: 'acme',
        name,
        version: '1.0.0',
        integrity: v.integrity,
        repository: 'acme/skills',
        commit,
      });
      expect(check.ok).toBe(true);
      if (!check.ok) continue;
      const params = check.statement.predicate.buildDefinition.externalParameters;
      expect(params).toMatchObject({ repository: 'https://github.com/acme/skills', commit, path: name });
      // Both versions came from the same indexing run, which the publish run asked for.
      expect(params.run).toBe('https://github.com/acme/skills/actions/runs/4242/attempts/1');
      expect(params.workflow).toEqual({
        repository: 'acme/skills',
        path: '.github/workflows/publish.yml',
        ref: 'refs/heads/main',
      });
      expect(check.statement.predicate.runDetails.builder.id).toBe(BUILDER);
    }
  });

  it('openssl verifies an attestation with the published key, as docs/provenance.md shows', async () => {
    const dir = tempDir('attestations-openssl');
    try {
      const key = RegistryKeysResponseSchema.parse((await request(t.app).get('/api/keys').expect(200)).body)
        .keys[0]?.key;
      if (!key) throw new Error('no published key');
      const [attestation] = await attestations('pdf');
      const envelope = attestation?.envelope;
      if (!envelope) throw new Error('no attestation');
      const payload = Buffer.from(envelope.payload, 'base64');
      // PAE: "DSSEv1" SP len(type) SP type SP len(payload) SP payload, lengths in bytes.
      const pae = Buffer.concat([
        Buffer.from(
          `DSSEv1 ${Buffer.byteLength(envelope.payloadType)} ${envelope.payloadType} ${payload.length} `,
        ),
        payload,
      ]);
      writeFileSync(join(dir, 'key.der'), Buffer.from(key, 'base64'));
      writeFileSync(join(dir, 'pae.bin'), pae);
      writeFileSync(join(dir, 'sig.bin'), Buffer.from(envelope.signatures[0]?.sig ?? '', 'base64'));
      await run('openssl', ['pkey', '-pubin', '-inform', 'DER', '-in', 'key.der', '-out', 'key.pem'], {
        cwd: dir,
      });
      const verify = [
        'pkeyutl',
        '-verify',
        '-pubin',
        '-inkey',
        'key.pem',
        '-rawin',
        '-in',
        'pae.bin',
        '-sigfile',
        'sig.bin',
      ];
      const ok = await run('openssl', verify, { cwd: dir });
      expect(ok.stdout).toContain('Signature Verified Successfully');
      // One byte of the statement changed: openssl refuses it.
      pae.writeUInt8(pae.readUInt8(pae.length - 2) ^ 1, pae.length - 2);
      writeFileSync(join(dir, 'pae.bin'), pae);
      await expect(run('openssl', verify, { cwd: dir })).rejects.toMatchObject({
        stdout: expect.stringContaining('Signature Verification Failure'),
      });
    } finally {
      removeDir(dir);
    }
  });

  it('a private package: not found, like a missing one, for a reader who may not read it', async () => {
    await t.db.updateTable('packages').set({ visibility: 'private' }).where('name', '=', 'csv').execute();
    const res = await request(t.app).get(attestationsPath('csv', '1.0.0')).expect(404);
    const missing = await request(t.app).get(attestationsPath('nope', '1.0.0')).expect(404);
    expect(res.body.error).toBe(missing.body.error);
    await t.db.updateTable('packages').set({ visibility: 'public' }).where('name', '=', 'csv').execute();
  });

  it('errors like the version route: an unknown version 404, a malformed one 400', async () => {
    await request(t.app).get(attestationsPath('pdf', '9.9.9')).expect(404);
    await request(t.app).get(attestationsPath('pdf', 'not a version')).expect(400);
  });
});
