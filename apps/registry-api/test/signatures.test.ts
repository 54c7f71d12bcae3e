import { execFile } from 'node:child_process';
import { createPublicKey, generateKeyPairSync, verify } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { RegistryKeysResponseSchema, VersionDetailSchema } from '@pkgreg/contracts';
import { indexSource } from '@pkgreg/indexer';
import { commitFiles, createRepo, removeDir, skillMd, tempDir } from '@pkgreg/indexer/testing';
import { registerSigningKey, retireSigningKey, signerFromPem, signPendingVersions } from '@pkgreg/registry';
import { createLogger } from '@pkgreg/server-kit';
import { until } from '@pkgreg/testing';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadEnv, registrySigner } from '../src/env.js';
import { startVersionSigner } from '../src/provenance/version-signer.js';
import { useTestRegistry } from './fixtures.js';

// Registry signatures (issue 30; docs/provenance.md): the registry's Ed25519 key signs every version's
// `@scope/name@version:integrity`, its public keys are published at GET /api/keys, and anyone verifies a
// version with them. Verified here with node:crypto directly, not with the registry's own helpers.

const t = useTestRegistry({ DETAIL_CACHE_TTL_MS: '0' });
const run = promisify(execFile);
const CLI = fileURLToPath(new URL('../dist/cli.js', import.meta.url));
let root: string;
let repo: string;

const pem = () =>
  generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
const index = () => indexSource({ db: t.db }, { kind: 'git', locator: repo, owner: 'acme' });

async function version(name: string, ref = 'latest') {
  const res = await request(t.app).get(`/api/packages/@acme/${name}/versions/${ref}`).expect(200);
  return VersionDetailSchema.parse(res.body);
}

async function keys() {
  return RegistryKeysResponseSchema.parse((await request(t.app).get('/api/keys').expect(200)).body).keys;
}

/** Whether `sig` is a published key's signature of the version, checked as any client would. */
async function verifies(
  v: { scope: string; name: string; version: string; integrity: string },
  sig: { keyid: string; sig: string },
) {
  const key = (await keys()).find((k) => k.keyid === sig.keyid);
  if (!key) return false;
  const publicKey = createPublicKey({ key: Buffer.from(key.key, 'base64'), format: 'der', type: 'spki' });
  const text = `@${v.scope}/${v.name}@${v.version}:${v.integrity}`;
  return verify(null, Buffer.from(text), publicKey, Buffer.from(sig.sig, 'base64'));
}

beforeAll(() => {
  root = tempDir('signatures');
  repo = createRepo(root, 'acme', 'skills', {
    'pdf/SKILL.md': skillMd(['name: pdf', 'description: Fill PDF forms.', 'version: 1.0.0']),
    'csv/SKILL.md': skillMd(['name: csv', 'description: Read CSV files.', 'version: 2.0.0']),
  });
});
afterAll(() => removeDir(root));

describe('registry signatures', () => {
  it('publishes no key and signs nothing until a key is configured', async () => {
    await index();
    expect(await keys()).toEqual([]);
    expect((await version('pdf')).signatures).toEqual([]);
  });

  it('signs every version, old ones included, over name, version and archive integrity', async () => {
    const signer = signerFromPem(pem());
    await registerSigningKey(t.db, signer);
    const [published] = await keys();
    expect(published).toMatchObject({
      keyid: signer.keyId,
      keytype: 'ed25519',
      scheme: 'ed25519',
      expires: null,
    });
    expect(signer.keyId).toMatch(/^SHA256:[A-Za-z0-9+/]{43}=$/);
    expect(await signPendingVersions(t.db, signer)).toBe(2);
    expect(await signPendingVersions(t.db, signer)).toBe(0);
    for (const name of ['pdf', 'csv']) {
      const v = await version(name);
      expect(v.signatures).toHaveLength(1);
      expect(await verifies(v, v.signatures[0] as { keyid: string; sig: string })).toBe(true);
      // The same signature says nothing about other bytes, another version or another package.
      expect(
        await verifies({ ...v, integrity: `sha512-${'A'.repeat(86)}==` }, v.signatures[0] as never),
      ).toBe(false);
      expect(await verifies({ ...v, version: '9.9.9' }, v.signatures[0] as never)).toBe(false);
      expect(await verifies({ ...v, name: 'other' }, v.signatures[0] as never)).toBe(false);
    }
  });

  it('the signer beside the API signs a new version as it appears', async () => {
    const signer = signerFromPem(pem());
    const task = await startVersionSigner(t.db, signer, {
      logger: createLogger('test', 'silent'),
      intervalMs: 50,
      logOrigin: 'registry.test/log',
      builderId: 'https://registry.test',
    });
    try {
      commitFiles(repo, {
        'pdf/SKILL.md': skillMd(['name: pdf', 'description: Fill PDF forms.', 'version: 1.1.0']),
      });
      await index();
      const signed = await until(async () => {
        const v = await version('pdf', '1.1.0');
        return v.signatures.some((s) => s.keyid === signer.keyId) && v;
      }, 'the new version to be signed');
      const sig = signed.signatures.find((s) => s.keyid === signer.keyId);
      expect(await verifies(signed, sig as never)).toBe(true);
      // And logged: the signed checkpoint covers every version (all public here).
      const note = await until(async () => {
        const res = await request(t.app).get('/api/log/checkpoint');
        return res.status === 200 && res.text.split('\n')[1] === '3' && res.text;
      }, 'a checkpoint of the three versions');
      expect(note.split('\n')[0]).toBe('registry.test/log');
      // Each version record names its leaf, for an inclusion proof (docs/provenance.md).
      const indexes = await Promise.all(
        [
          ['pdf', '1.0.0'],
          ['csv', '2.0.0'],
          ['pdf', '1.1.0'],
        ].map(async ([name, ref]) => (await version(name as string, ref)).log?.index),
      );
      // Logged in creation order: the two of the first run (in its order), then the new one.
      expect([...indexes].sort()).toEqual([0, 1, 2]);
      expect(indexes[2]).toBe(2);
    } finally {
      await task.stop();
    }
  });

  it('a rotation: the retired key signs nothing more; its signatures stay published and valid', async () => {
    const old = signerFromPem(pem());
    await registerSigningKey(t.db, old);
    await signPendingVersions(t.db, old, { limit: 10_000 });
    const before = await version('csv');
    const oldSig = before.signatures.find((s) => s.keyid === old.keyId);
    expect(await retireSigningKey(t.db, old.keyId)).toBe(true);
    expect(await retireSigningKey(t.db, old.keyId)).toBe(false);
    await expect(signPendingVersions(t.db, old)).rejects.toThrow(/was retired/);
    const listed = (await keys()).find((k) => k.keyid === old.keyId);
    expect(listed?.expires).toEqual(expect.any(String));
    expect(await verifies(before, oldSig as never)).toBe(true);
    // A key that is not published is refused rather than used.
    await expect(signPendingVersions(t.db, signerFromPem(pem()))).rejects.toThrow(/not published/);
  });

  it('two signers at once: one signs, the other skips its turn; no version is signed twice', async () => {
    const signer = signerFromPem(pem());
    await registerSigningKey(t.db, signer);
    const [a, b] = await Promise.all([signPendingVersions(t.db, signer), signPendingVersions(t.db, signer)]);
    // One signed all three versions; the other found the lock held (null) or nothing left (0).
    expect([a ?? 0, b ?? 0].sort()).toEqual([0, 3]);
    const count = await t.db
      .selectFrom('version_signatures')
      .select(({ fn }) => fn.countAll<number>().as('n'))
      .where('keyid', '=', signer.keyId)
      .executeTakeFirstOrThrow();
    const versions = await t.db
      .selectFrom('package_versions')
      .select(({ fn }) => fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    expect(Number(count.n)).toBe(Number(versions.n));
  });
});

describe('pnpm registry keys:* and signatures:backfill', () => {
  const cli = (args: string[], env: Record<string, string> = {}) =>
    run(process.execPath, [CLI, ...args], {
      env: { ...process.env, DATABASE_URL: t.url, LOG_LEVEL: 'silent', ...env },
    });

  it('keys:generate prints a key the registry accepts; backfill signs the rest once', async () => {
    const generated = await cli(['keys:generate']);
    expect(generated.stdout).toMatch(/^-----BEGIN PRIVATE KEY-----/);
    const signer = signerFromPem(generated.stdout);
    expect(generated.stderr).toContain(signer.keyId);
    const first = await cli(['signatures:backfill'], { REGISTRY_SIGNING_KEY: generated.stdout });
    expect(first.stdout).toMatch(/^3 versions signed with SHA256:/);
    const again = await cli(['signatures:backfill'], { REGISTRY_SIGNING_KEY: generated.stdout });
    expect(again.stdout).toMatch(/^0 versions signed/);
    await expect(cli(['signatures:backfill'])).rejects.toMatchObject({
      code: 1,
      stderr: expect.stringContaining('no signing key'),
    });
    await expect(cli(['keys:retire', 'SHA256:nope'])).rejects.toMatchObject({ code: 1 });
  });

  it('a configured key that is not an Ed25519 private key is refused, naming the setting, never the value', () => {
    const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 })
      .privateKey.export({ type: 'pkcs8', format: 'pem' })
      .toString();
    expect(() => registrySigner(loadEnv({ REGISTRY_SIGNING_KEY: rsa }))).toThrow(
      /^REGISTRY_SIGNING_KEY: the registry signing key must be Ed25519, not rsa$/,
    );
    expect(() => registrySigner(loadEnv({ REGISTRY_SIGNING_KEY: 'not a key' }))).toThrow(
      /^REGISTRY_SIGNING_KEY: the registry signing key is not a PEM private key$/,
    );
    expect(() => registrySigner(loadEnv({ REGISTRY_SIGNING_KEY_FILE: '/no/such/key.pem' }))).toThrow(
      /REGISTRY_SIGNING_KEY_FILE: cannot read/,
    );
    expect(() => loadEnv({ REGISTRY_SIGNING_KEY: 'x', REGISTRY_SIGNING_KEY_FILE: '/k' })).toThrow(/not both/);
    expect(registrySigner(loadEnv({}))).toBeUndefined();
  });
});
