import { generateKeyPairSync } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createTestDatabase, type TestDatabase } from '@pkgreg/db/testing';
import {
  publicKeyBase64,
  type RegistrySigner,
  registerSigningKey,
  signerFromPem,
  signPendingVersions,
  versionSignedText,
} from '@pkgreg/registry';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyExitCode } from '../src/actions/verify.js';
import { EXIT } from '../src/errors.js';
import { checkSignatures, type RegistryKey, registryKeys, signedText } from '../src/signatures.js';
import { type CliResult, runCli, tempDir } from './helpers/cli.js';
import { startFaultProxy } from './helpers/fault-proxy.js';
import { tree } from './helpers/folders.js';
import { type RunningRegistry, startRegistry } from './helpers/registry.js';
import { type SkillFixture, seedSkills, updateSkill } from './helpers/seed.js';

// Registry signatures as the CLI checks them (docs/provenance.md, "Verifying signatures"): install
// refuses a version whose signature fails (exit 9) before writing anything, records the key in the
// lockfile, `--no-verify` skips it out loud; `pkgreg verify` re-checks files, record and signature.
// The registry is the real one; versions are signed with the registry's own functions, as its signer does.

/** A fresh Ed25519 key as the registry is configured with it (PKCS#8 PEM). */
function newSigner(): RegistrySigner {
  const { privateKey } = generateKeyPairSync('ed25519');
  return signerFromPem(privateKey.export({ type: 'pkcs8', format: 'pem' }).toString());
}

const INTEGRITY = `sha512-${'A'.repeat(86)}==`;
const OTHER_INTEGRITY = `sha512-${'B'.repeat(86)}==`;

/** A version record as the registry serves it, signed by `signer` over the registry's own text. */
async function signedVersion(
  signer: RegistrySigner,
  over = { scope: 'acme', name: 'pdf', version: '1.0.0' },
) {
  const sig = await signer.sign(
    Buffer.from(versionSignedText(over.scope, over.name, over.version, INTEGRITY)),
  );
  return {
    name: '@acme/pdf',
    version: '1.0.0',
    integrity: INTEGRITY,
    createdAt: '2026-11-25T12:00:00.000Z',
    signatures: [{ keyid: signer.keyId, sig: sig.toString('base64') }],
  };
}

function keysOf(...keys: { signer: RegistrySigner; expires?: string }[]): Map<string, RegistryKey> {
  return registryKeys({
    keys: keys.map(({ signer, expires }) => ({
      keyid: signer.keyId,
      keytype: 'ed25519' as const,
      scheme: 'ed25519' as const,
      key: publicKeyBase64(signer.publicKey),
      expires: expires ?? null,
    })),
  });
}

describe('checkSignatures', () => {
  const signer = newSigner();

  it('covers the text the registry signs', () => {
    expect(signedText('@acme/pdf', '1.0.0', INTEGRITY)).toBe(
      versionSignedText('acme', 'pdf', '1.0.0', INTEGRITY),
    );
  });

  it('passes a version signed by a published key, naming the key', async () => {
    expect(checkSignatures(keysOf({ signer }), await signedVersion(signer))).toEqual({
      ok: true,
      keyid: signer.keyId,
    });
  });

  it('fails a signature over another integrity, version or name', async () => {
    const keys = keysOf({ signer });
    const good = await signedVersion(signer);
    const tampered = [
      { ...good, integrity: OTHER_INTEGRITY },
      await signedVersion(signer, { scope: 'acme', name: 'pdf', version: '0.9.0' }),
      await signedVersion(signer, { scope: 'acme', name: 'pdf-tools', version: '1.0.0' }),
      await signedVersion(signer, { scope: 'evil', name: 'pdf', version: '1.0.0' }),
      { ...good, signatures: [{ keyid: signer.keyId, sig: 'AAAA' }] },
    ];
    for (const version of tampered) {
      expect(checkSignatures(keys, version)).toEqual({
        ok: false,
        problem: `the signature by key ${signer.keyId} does not verify (its name, version or integrity is not what the key signed)`,
      });
    }
  });

  it('fails a signature by a key the registry does not publish', async () => {
    const published = newSigner();
    expect(checkSignatures(keysOf({ signer: published }), await signedVersion(signer))).toEqual({
      ok: false,
      problem: `signed by an unknown key ${signer.keyId} (not one the registry publishes)`,
    });
  });

  it('fails a key that expired before the version was created, not one that expired after', async () => {
    const version = await signedVersion(signer);
    expect(checkSignatures(keysOf({ signer, expires: '2026-11-25T11:59:59.000Z' }), version)).toEqual({
      ok: false,
      problem: `signed by key ${signer.keyId}, which expired (2026-11-25T11:59:59.000Z) before the version was created (2026-11-25T12:00:00.000Z)`,
    });
    expect(checkSignatures(keysOf({ signer, expires: '2026-11-25T12:00:01.000Z' }), version).ok).toBe(true);
  });

  it('fails an unsigned version, and one good signature beside a bad one', async () => {
    const good = await signedVersion(signer);
    const keys = keysOf({ signer });
    expect(checkSignatures(keys, { ...good, signatures: [] })).toMatchObject({
      ok: false,
      problem: expect.stringMatching(/^unsigned /),
    });
    const stranger = newSigner();
    const both = { ...good, signatures: [...good.signatures, ...(await signedVersion(stranger)).signatures] };
    expect(checkSignatures(keys, both)).toMatchObject({
      ok: false,
      problem: expect.stringContaining('unknown key'),
    });
  });

  it('pkgreg verify: a bad signature outranks modified files, which outrank a missing version', () => {
    expect(verifyExitCode([])).toBe(EXIT.ok);
    expect(verifyExitCode(['notFound', 'files', 'signature'])).toBe(EXIT.signature);
    expect(verifyExitCode(['notFound', 'files'])).toBe(EXIT.integrity);
    expect(verifyExitCode(['notFound'])).toBe(EXIT.notFound);
  });
});

const skill = (name: string): SkillFixture => ({
  owner: 'signed',
  repo: 'skills',
  path: name,
  name,
  description: `The ${name} skill`,
});
const PDF = skill('pdf');
const NOTES = skill('notes');
const REPLAYED = skill('replayed');
const ROTATED = skill('rotated');
/** Gets a new (unsigned) version after it is installed. */
const MOVING = skill('moving');
/** Indexed after the signer's pass: unsigned. */
const FRESH: SkillFixture = { ...skill('fresh'), repo: 'later' };

let database: TestDatabase;
let registry: RunningRegistry;
let home: string;
const signer = newSigner();

async function versionOf(name: string): Promise<{ id: string; version: string; createdAt: Date }> {
  const row = await database.db
    .selectFrom('package_versions as v')
    .innerJoin('packages as p', 'p.id', 'v.package_id')
    .select(['v.id', 'v.version', 'v.created_at'])
    .where('p.scope', '=', 'signed')
    .where('p.name', '=', name)
    .executeTakeFirstOrThrow();
  return { id: row.id, version: row.version, createdAt: new Date(row.created_at) };
}

/**
 * The signing key retired a second before `name`'s version was created (as `pnpm registry keys:retire`
 * would have, had the version come later) while `run` runs; then current again.
 */
async function withKeyRetiredBefore<T>(name: string, run: () => Promise<T>): Promise<T> {
  const { createdAt } = await versionOf(name);
  const retire = (at: Date | null) =>
    database.db
      .updateTable('registry_signing_keys')
      .set({ expires_at: at })
      .where('keyid', '=', signer.keyId)
      .execute();
  await retire(new Date(createdAt.getTime() - 1000));
  try {
    return await run();
  } finally {
    await retire(null);
  }
}

beforeAll(async () => {
  database = await createTestDatabase();
  await seedSkills(database, [PDF, NOTES, REPLAYED, ROTATED, MOVING]);
  await registerSigningKey(database.db, signer);
  expect(await signPendingVersions(database.db, signer)).toBe(5);
  await seedSkills(database, [FRESH]);
  // A signature replayed from another version: valid, by the registry's key, over another text.
  const pdf = await versionOf('pdf');
  const replayed = await versionOf('replayed');
  const { signature } = await database.db
    .selectFrom('version_signatures')
    .select('signature')
    .where('version_id', '=', pdf.id)
    .executeTakeFirstOrThrow();
  await database.db
    .updateTable('version_signatures')
    .set({ signature })
    .where('version_id', '=', replayed.id)
    .execute();
  registry = await startRegistry(database.url);
  home = await tempDir('home');
}, 120_000);

afterAll(async () => {
  await registry?.stop();
  await database?.destroy();
});

function cli(args: string[], cwd: string, url = registry.url): Promise<CliResult> {
  return runCli(['--registry', url, ...args], { cwd, home, env: { DO_NOT_TRACK: '1' } });
}

const install = (cwd: string, ...args: string[]) => cli(['install', '--agent', 'universal', ...args], cwd);

async function lockfile(cwd: string) {
  return JSON.parse(await readFile(join(cwd, 'pkgreg-lock.json'), 'utf8')) as {
    packages: Record<string, { version: string; signature?: { keyid: string } }>;
  };
}

/** A refusal: exit 9, one line naming the version and why, nothing written. */
async function expectRefused(result: CliResult, cwd: string, name: string, why: string) {
  const { version } = await versionOf(name);
  expect(result.stderr).toBe(
    `error: Signature check failed for @signed/${name}@${version}: ${why}; not installed (--no-verify skips the check)\n`,
  );
  expect(result.code).toBe(EXIT.signature);
  expect(await tree(cwd)).toEqual([]);
}

describe('pkgreg install verifies signatures', () => {
  it('installs a signed version and records the key that verified it', async () => {
    const cwd = await tempDir('signed');
    const result = await install(cwd, '@signed/pdf');
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect((await lockfile(cwd)).packages['@signed/pdf']?.signature).toEqual({ keyid: signer.keyId });
  });

  it('refuses an unsigned version while the registry publishes keys', async () => {
    const cwd = await tempDir('unsigned');
    await expectRefused(
      await install(cwd, '@signed/fresh'),
      cwd,
      'fresh',
      'unsigned (the registry publishes signing keys, this version has no signature)',
    );
  });

  it('refuses a signature replayed from another version', async () => {
    const cwd = await tempDir('replayed');
    await expectRefused(
      await install(cwd, '@signed/replayed'),
      cwd,
      'replayed',
      `the signature by key ${signer.keyId} does not verify (its name, version or integrity is not what the key signed)`,
    );
  });

  it('refuses a version signed by a key the registry does not publish', async () => {
    // A registry answering GET /api/keys with another key than the one its versions carry.
    const other = newSigner();
    const proxy = await startFaultProxy(registry.url, (req) =>
      req.url === '/api/keys' ? () => JSON.stringify({ keys: [published(other)] }) : 'forward',
    );
    try {
      const cwd = await tempDir('unknown');
      const result = await cli(['install', '--agent', 'universal', '@signed/pdf'], cwd, proxy.url);
      await expectRefused(
        result,
        cwd,
        'pdf',
        `signed by an unknown key ${signer.keyId} (not one the registry publishes)`,
      );
    } finally {
      await proxy.close();
    }
  });

  it('refuses a version created after its key expired', async () => {
    const cwd = await tempDir('expired');
    const result = await withKeyRetiredBefore('rotated', () => install(cwd, '@signed/rotated'));
    expect(result.stderr).toMatch(
      new RegExp(
        `signed by key ${escapeRegExp(signer.keyId)}, which expired \\(.+\\) before the version was created`,
      ),
    );
    expect(result.code).toBe(EXIT.signature);
    expect(await tree(cwd)).toEqual([]);
  });

  it('a frozen restore still verifies', async () => {
    const cwd = await tempDir('frozen');
    expect((await install(cwd, '@signed/rotated')).code).toBe(0);
    await rm(join(cwd, '.agents'), { recursive: true });
    const result = await withKeyRetiredBefore('rotated', () => cli(['install', '--frozen'], cwd));
    expect(result.stderr).toContain('Signature check failed for @signed/rotated@');
    expect(result.code).toBe(EXIT.signature);
    expect(existsSync(join(cwd, '.agents'))).toBe(false);
  });

  it('--no-verify installs anyway, says so, and records no key', async () => {
    const cwd = await tempDir('no-verify');
    const result = await install(cwd, '@signed/fresh', '--no-verify');
    expect(result.stderr).toBe(
      "warning: --no-verify: the registry's signatures are not checked; what is installed may not be what it published\n",
    );
    expect(result.code).toBe(0);
    const entry = (await lockfile(cwd)).packages['@signed/fresh'];
    expect(entry?.version).toBe((await versionOf('fresh')).version);
    expect(entry).not.toHaveProperty('signature');
  });
});

describe('pkgreg update verifies the new versions', () => {
  it('refuses an unsigned new version, and takes it with --no-verify and a warning', async () => {
    const cwd = await tempDir('update');
    expect((await install(cwd, '@signed/moving')).code).toBe(0);
    const before = await readFile(join(cwd, 'pkgreg-lock.json'), 'utf8');
    await updateSkill(database, { ...MOVING, body: 'A newer body, not signed yet.' });
    const refused = await cli(['update'], cwd);
    expect(refused.stderr).toMatch(
      /^error: Signature check failed for @signed\/moving@\S+: unsigned \(the registry publishes signing keys, this version has no signature\); not installed \(--no-verify skips the check\)\n$/,
    );
    expect(refused.code).toBe(EXIT.signature);
    expect(await readFile(join(cwd, 'pkgreg-lock.json'), 'utf8')).toBe(before);
    const taken = await cli(['update', '--no-verify'], cwd);
    expect(taken.stderr).toContain('warning: --no-verify:');
    expect(taken.code).toBe(0);
    expect(taken.stdout).toMatch(/^updated @signed\/moving /m);
    expect((await lockfile(cwd)).packages['@signed/moving']).not.toHaveProperty('signature');
  });
});

describe('pkgreg verify', () => {
  let cwd: string;
  beforeAll(async () => {
    cwd = await tempDir('verify');
    expect((await install(cwd, '@signed/pdf', '@signed/notes')).code).toBe(0);
  });

  it('passes a clean install', async () => {
    const result = await cli(['verify'], cwd);
    const [notes, pdf] = [await versionOf('notes'), await versionOf('pdf')];
    expect(result.stdout).toBe(
      `ok     @signed/notes@${notes.version}\nok     @signed/pdf@${pdf.version}\n2 packages: 2 ok, 0 failed (registry signatures checked)\n`,
    );
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
  });

  it('--json: each package, its key and problems, and the verdict', async () => {
    const result = await cli(['verify', '--json'], cwd);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({
      packages: [
        {
          name: '@signed/notes',
          version: (await versionOf('notes')).version,
          ok: true,
          keyid: signer.keyId,
          // This registry keeps no transparency log and attests nothing.
          log: null,
          attested: false,
          problems: [],
        },
        {
          name: '@signed/pdf',
          version: (await versionOf('pdf')).version,
          ok: true,
          keyid: signer.keyId,
          // This registry keeps no transparency log and attests nothing.
          log: null,
          attested: false,
          problems: [],
        },
      ],
      checkpoint: null,
      ok: true,
    });
  });

  it('fails an edited installed file with exit 5', async () => {
    const file = join(cwd, '.agents/skills/pdf/SKILL.md');
    const original = await readFile(file);
    await writeFile(file, 'edited\n');
    try {
      const result = await cli(['verify'], cwd);
      expect(result.stdout).toContain(
        `FAILED @signed/pdf@${(await versionOf('pdf')).version}\n  modified: .agents/skills/pdf/SKILL.md\n`,
      );
      expect(result.stdout).toContain('2 packages: 1 ok, 1 failed (registry signatures checked)\n');
      expect(result.stderr).toBe('error: 1 of 2 packages failed verification\n');
      expect(result.code).toBe(EXIT.integrity);
    } finally {
      await writeFile(file, original);
    }
  });

  it('fails a version whose key expired before it was created with exit 9, above modified files', async () => {
    const file = join(cwd, '.agents/skills/pdf/SKILL.md');
    const original = await readFile(file);
    await writeFile(file, 'edited\n');
    try {
      const result = await withKeyRetiredBefore('pdf', () => cli(['verify', '--json'], cwd));
      const report = JSON.parse(result.stdout) as {
        packages: { name: string; ok: boolean; keyid: string | null; problems: string[] }[];
        ok: boolean;
      };
      expect(report.ok).toBe(false);
      const pdf = report.packages.find((pkg) => pkg.name === '@signed/pdf');
      expect(pdf).toMatchObject({ ok: false, keyid: null });
      expect(pdf?.problems).toEqual([
        'modified: .agents/skills/pdf/SKILL.md',
        expect.stringMatching(
          new RegExp(
            `^signature: signed by key ${escapeRegExp(signer.keyId)}, which expired \\(.+\\) before the version was created \\(.+\\)$`,
          ),
        ),
      ]);
      expect(result.stderr).toMatch(/^error: [12] of 2 packages failed verification\n$/);
      expect(result.code).toBe(EXIT.signature);
    } finally {
      await writeFile(file, original);
    }
  });
});

describe('a registry that publishes no keys', () => {
  let bare: TestDatabase;
  let unsigned: RunningRegistry;
  beforeAll(async () => {
    bare = await createTestDatabase();
    await seedSkills(bare, [{ ...skill('plain'), owner: 'bare' }]);
    unsigned = await startRegistry(bare.url);
  }, 120_000);
  afterAll(async () => {
    await unsigned?.stop();
    await bare?.destroy();
  });

  it('installs without a warning, records no key, and verify says nothing was signed', async () => {
    const cwd = await tempDir('no-keys');
    const installed = await cli(['install', '--agent', 'universal', '@bare/plain'], cwd, unsigned.url);
    expect(installed.stderr).toBe('');
    expect(installed.code).toBe(0);
    expect((await lockfile(cwd)).packages['@bare/plain']).not.toHaveProperty('signature');
    const verified = await cli(['verify'], cwd, unsigned.url);
    expect(verified.stdout).toMatch(
      /^ok {5}@bare\/plain@\S+\n1 package: 1 ok, 0 failed \(the registry publishes no signing keys, so no signature was checked\)\n$/,
    );
    expect(verified.code).toBe(0);
  });
});

function published(key: RegistrySigner) {
  return {
    keyid: key.keyId,
    keytype: 'ed25519',
    scheme: 'ed25519',
    key: publicKeyBase64(key.publicKey),
    expires: null,
  };
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
