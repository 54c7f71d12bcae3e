import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createTestDatabase, type TestDatabase } from '@pkgreg/db/testing';
import {
  checkpoint,
  type DsseEnvelope,
  logPendingVersions,
  provenanceStatement,
  type RegistrySigner,
  registerSigningKey,
  signCheckpoint,
  signerFromPem,
  signPendingVersions,
  signStatement,
} from '@pkgreg/registry';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXIT } from '../src/errors.js';
import { type CliResult, runCli, tempDir } from './helpers/cli.js';
import { type FaultPlan, startFaultProxy } from './helpers/fault-proxy.js';
import { type RunningRegistry, startRegistry } from './helpers/registry.js';
import { type SkillFixture, seedSkills } from './helpers/seed.js';

// The transparency log and attestations as the CLI checks them (docs/provenance.md, "Verifying
// signatures"): install records the leaf and remembers the newest checkpoint per registry, refusing one
// that does not extend it (exit 9); `verify` proves each locked version in the log and requires the
// attestation install verified. The registry, its log and its signatures are the real ones; a fault
// proxy plays the registry that lies.

const ORIGIN = 'registry.test/log';

function newSigner(): RegistrySigner {
  const { privateKey } = generateKeyPairSync('ed25519');
  return signerFromPem(privateKey.export({ type: 'pkcs8', format: 'pem' }).toString());
}

const skill = (name: string): SkillFixture => ({
  owner: 'logged',
  repo: 'skills',
  path: name,
  name,
  description: `The ${name} skill`,
});
const PDF = skill('pdf');
const NOTES = skill('notes');
const CHARTS = skill('charts');
/** Created (and signed) after the log's last pass: not in the log. */
const LATE: SkillFixture = { ...skill('late'), repo: 'later' };

let database: TestDatabase;
let registry: RunningRegistry;
const signer = newSigner();
let logSize = 0;

beforeAll(async () => {
  database = await createTestDatabase();
  await seedSkills(database, [PDF, NOTES, CHARTS]);
  await registerSigningKey(database.db, signer);
  await signPendingVersions(database.db, signer);
  logSize = await logPendingVersions(database.db);
  expect(logSize).toBe(3);
  expect((await checkpoint(database.db, signer, ORIGIN))?.size).toBe(3);
  await seedSkills(database, [LATE]);
  expect(await signPendingVersions(database.db, signer)).toBe(1);
  registry = await startRegistry(database.url);
}, 120_000);

afterAll(async () => {
  await registry?.stop();
  await database?.destroy();
});

function cli(args: string[], cwd: string, home: string, url = registry.url): Promise<CliResult> {
  return runCli(['--registry', url, ...args], { cwd, home, env: { DO_NOT_TRACK: '1' } });
}

const install = (cwd: string, home: string, url: string, ...names: string[]) =>
  cli(['install', '--agent', 'universal', ...names], cwd, home, url);

interface LockedEntry {
  version: string;
  integrity: string;
  sourceRepo: string;
  sourceCommit: string | null;
  log?: { index: number };
  attested?: true;
}

async function lockfile(cwd: string): Promise<Record<string, LockedEntry>> {
  return JSON.parse(await readFile(join(cwd, 'pkgreg-lock.json'), 'utf8')).packages;
}

async function leafIndexOf(name: string): Promise<number> {
  const row = await database.db
    .selectFrom('log_leaves as l')
    .innerJoin('package_versions as v', 'v.id', 'l.version_id')
    .innerJoin('packages as p', 'p.id', 'v.package_id')
    .select('l.idx')
    .where('p.scope', '=', 'logged')
    .where('p.name', '=', name)
    .executeTakeFirstOrThrow();
  return Number(row.idx);
}

/** A proxy in front of the registry whose plan can change between runs. */
async function proxyWith(initial: FaultPlan = () => 'forward') {
  let plan = initial;
  const proxy = await startFaultProxy(registry.url, (req, index) => plan(req, index));
  return {
    url: proxy.url,
    close: () => proxy.close(),
    set(next: FaultPlan) {
      plan = next;
    },
  };
}

const text = (body: string) => ({ status: 200, headers: { 'content-type': 'text/plain' }, body });
const json = (value: unknown) => ({ status: 200, body: JSON.stringify(value) });

/** A checkpoint signed with the registry's own key over a tree it never had. */
function forgedCheckpoint(size: number): Promise<string> {
  return signCheckpoint({ origin: ORIGIN, size, rootHash: randomBytes(32) }, signer);
}

const forkMessage = (from: number, to: number) =>
  `error: the registry's transparency log does not extend the checkpoint seen before (size ${from} → ${to}): the registry may be showing different histories\n`;

describe('pkgreg install and the transparency log', () => {
  it('records the version’s leaf and remembers the checkpoint per registry', async () => {
    const cwd = await tempDir('log-install');
    const home = await tempDir('log-home');
    const result = await install(cwd, home, registry.url, '@logged/pdf');
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect((await lockfile(cwd))['@logged/pdf']?.log).toEqual({ index: await leafIndexOf('pdf') });
    const [state] = await readdir(join(home, '.config', 'pkgreg', 'checkpoints'));
    const seen = JSON.parse(
      await readFile(join(home, '.config', 'pkgreg', 'checkpoints', state as string), 'utf8'),
    );
    expect(seen).toMatchObject({ origin: ORIGIN, size: logSize });
  });

  it('records no leaf for a version not logged yet, and installs it', async () => {
    const cwd = await tempDir('log-late');
    const result = await install(cwd, await tempDir('log-home'), registry.url, '@logged/late');
    expect(result.code).toBe(0);
    expect((await lockfile(cwd))['@logged/late']).not.toHaveProperty('log');
  });

  it('refuses a checkpoint of the same size with another root, a smaller one, and one not extending it', async () => {
    const home = await tempDir('log-fork-home');
    const proxy = await proxyWith();
    try {
      expect((await install(await tempDir('log-fork'), home, proxy.url, '@logged/pdf')).code).toBe(0);
      const forks: [number, FaultPlan][] = [
        [logSize, () => 'forward'],
        [logSize - 1, () => 'forward'],
        [
          logSize + 2,
          (req) =>
            req.url?.startsWith('/api/log/proof/consistency')
              ? json({ hashes: [randomBytes(32).toString('base64'), randomBytes(32).toString('base64')] })
              : 'forward',
        ],
      ];
      for (const [size, rest] of forks) {
        const note = await forgedCheckpoint(size);
        proxy.set((req, index) => (req.url === '/api/log/checkpoint' ? text(note) : rest(req, index)));
        const cwd = await tempDir('log-forked');
        const result = await install(cwd, home, proxy.url, '@logged/notes');
        expect(result.stderr).toBe(forkMessage(logSize, size));
        expect(result.code).toBe(EXIT.signature);
        const verified = await cli(['verify'], await tempDir('log-forked-verify'), home, proxy.url);
        expect(verified.code).not.toBe(0);
      }
      // The real log still extends what was seen: the forgeries were never remembered.
      proxy.set(() => 'forward');
      expect((await install(await tempDir('log-after'), home, proxy.url, '@logged/notes')).code).toBe(0);
    } finally {
      await proxy.close();
    }
  });

  it('stops at a kept checkpoint file that is damaged, and leaves it for a person to look at', async () => {
    const home = await tempDir('log-damaged-home');
    expect((await install(await tempDir('log-damaged'), home, registry.url, '@logged/pdf')).code).toBe(0);
    const dir = join(home, '.config', 'pkgreg', 'checkpoints');
    const [file] = await readdir(dir);
    const path = join(dir, file as string);
    await writeFile(path, '{"origin": "registry.test/log", "size": "many"}\n');
    const result = await install(await tempDir('log-damaged-2'), home, registry.url, '@logged/notes');
    expect(result.stderr).toBe(
      `error: ${path} is not a checkpoint pkgreg wrote; move it away to start over\n`,
    );
    expect(result.code).toBe(EXIT.error);
    // Not overwritten: forgetting it would let a fork pass unseen.
    expect(await readFile(path, 'utf8')).toBe('{"origin": "registry.test/log", "size": "many"}\n');
  });

  it('refuses a checkpoint not signed by a key the registry publishes', async () => {
    const note = await signCheckpoint(
      { origin: ORIGIN, size: logSize, rootHash: randomBytes(32) },
      newSigner(),
    );
    const proxy = await proxyWith((req) => (req.url === '/api/log/checkpoint' ? text(note) : 'forward'));
    try {
      const result = await install(
        await tempDir('log-unsigned'),
        await tempDir('log-home'),
        proxy.url,
        '@logged/pdf',
      );
      expect(result.stderr).toBe(
        "error: the registry's transparency log checkpoint is not signed by a key the registry publishes\n",
      );
      expect(result.code).toBe(EXIT.signature);
    } finally {
      await proxy.close();
    }
  });
});

describe('pkgreg verify and the transparency log', () => {
  it('proves each locked version in the log', async () => {
    const cwd = await tempDir('log-verify');
    const home = await tempDir('log-home');
    expect((await install(cwd, home, registry.url, '@logged/pdf', '@logged/notes')).code).toBe(0);
    const result = await cli(['verify', '--json'], cwd, home);
    // The report names each leaf proved and the checkpoint it was proved in.
    expect(JSON.parse(result.stdout)).toEqual({
      packages: [
        expect.objectContaining({
          name: '@logged/notes',
          ok: true,
          log: { index: await leafIndexOf('notes'), proved: true },
          attested: false,
        }),
        expect.objectContaining({
          name: '@logged/pdf',
          ok: true,
          log: { index: await leafIndexOf('pdf'), proved: true },
        }),
      ],
      checkpoint: { origin: ORIGIN, size: logSize },
      ok: true,
    });
    expect(result.code).toBe(0);
  });

  it('reports a public version missing from the log', async () => {
    const cwd = await tempDir('log-missing');
    const home = await tempDir('log-home');
    expect((await install(cwd, home, registry.url, '@logged/late')).code).toBe(0);
    const result = await cli(['verify'], cwd, home);
    expect(result.stdout).toContain('FAILED @logged/late@');
    expect(result.stdout).toContain('  log: not in the transparency log\n');
    expect(result.code).toBe(EXIT.signature);
  });

  it('reports an inclusion proof that does not verify', async () => {
    const cwd = await tempDir('log-proof');
    const home = await tempDir('log-home');
    expect((await install(cwd, home, registry.url, '@logged/pdf')).code).toBe(0);
    const proxy = await proxyWith((req) =>
      req.url?.startsWith('/api/log/proof/inclusion')
        ? (body: string) => {
            const proof = JSON.parse(body) as { hashes: string[] };
            proof.hashes[0] = randomBytes(32).toString('base64');
            return JSON.stringify(proof);
          }
        : 'forward',
    );
    try {
      const result = await cli(['verify', '--json'], cwd, home, proxy.url);
      const report = JSON.parse(result.stdout) as { packages: { problems: string[] }[] };
      expect(report.packages[0]?.problems).toEqual([
        `log: the transparency log does not prove entry ${await leafIndexOf('pdf')} is this version with pkgreg-lock.json's integrity (checkpoint size ${logSize})`,
      ]);
      expect(result.code).toBe(EXIT.signature);
    } finally {
      await proxy.close();
    }
  });

  it('reports a lockfile whose integrity is not the logged one', async () => {
    // The lockfile's integrity is what is proved: a lockfile edited to other bytes fails the proof.
    const cwd = await tempDir('log-edited');
    const home = await tempDir('log-home');
    expect((await install(cwd, home, registry.url, '@logged/charts')).code).toBe(0);
    const path = join(cwd, 'pkgreg-lock.json');
    const lock = JSON.parse(await readFile(path, 'utf8'));
    lock.packages['@logged/charts'].integrity = `sha512-${'C'.repeat(86)}==`;
    await writeFile(path, JSON.stringify(lock));
    const result = await cli(['verify'], cwd, home);
    expect(result.stdout).toMatch(/ {2}log: the transparency log does not prove entry \d+ is this version/);
    expect(result.code).toBe(EXIT.signature);
  });
});

describe('attestations', () => {
  /** The registry's attestation of what the lockfile says, over `commit` instead when given. */
  async function attestation(entry: LockedEntry, name: string, commit?: string): Promise<DsseEnvelope> {
    const statement = provenanceStatement(
      {
        scope: 'logged',
        name,
        version: entry.version,
        integrity: entry.integrity,
        createdAt: new Date(),
        // The fixtures are indexed from local clones: their repository is `owner/repo`, not a URL.
        repositoryUrl: `https://code.test/${entry.sourceRepo}`,
        commit: commit ?? (entry.sourceCommit as string),
        path: name,
        ci: null,
      },
      registry.url,
    );
    return signStatement(statement, signer);
  }

  const serving =
    (envelopes: DsseEnvelope[]): FaultPlan =>
    (req) =>
      req.url?.endsWith('/attestations')
        ? json({
            attestations: envelopes.map((envelope) => ({
              predicateType: 'https://slsa.dev/provenance/v1',
              envelope,
            })),
          })
        : 'forward';

  it('records an attestation that verifies, then reports one naming another commit or none', async () => {
    const plain = await tempDir('att-plain');
    const home = await tempDir('att-home');
    expect((await install(plain, home, registry.url, '@logged/notes')).code).toBe(0);
    const locked = (await lockfile(plain))['@logged/notes'] as LockedEntry;
    expect(locked).not.toHaveProperty('attested');
    expect(locked.sourceRepo).toBe('logged/skills');
    const good = await attestation(locked, 'notes');
    const proxy = await proxyWith(serving([good]));
    try {
      const cwd = await tempDir('att-install');
      expect((await install(cwd, home, proxy.url, '@logged/notes')).code).toBe(0);
      expect((await lockfile(cwd))['@logged/notes']?.attested).toBe(true);
      expect((await cli(['verify'], cwd, home, proxy.url)).code).toBe(0);

      const otherCommit = 'f'.repeat(40);
      proxy.set(serving([await attestation(locked, 'notes', otherCommit)]));
      const tampered = await cli(['verify'], cwd, home, proxy.url);
      expect(tampered.stdout).toContain(
        `  attestation: the attestation says it was built from commit ${otherCommit}, not ${locked.sourceCommit}\n`,
      );
      expect(tampered.code).toBe(EXIT.signature);

      proxy.set(serving([]));
      const missing = await cli(['verify'], cwd, home, proxy.url);
      expect(missing.stdout).toContain('  attestation: attestation missing');
      expect(missing.code).toBe(EXIT.signature);

      // Install refuses an attestation naming another commit before writing anything.
      proxy.set(serving([await attestation(locked, 'notes', otherCommit)]));
      const refused = await install(await tempDir('att-refused'), home, proxy.url, '@logged/notes');
      expect(refused.stderr).toContain(
        `attestation: the attestation says it was built from commit ${otherCommit}`,
      );
      expect(refused.code).toBe(EXIT.signature);
    } finally {
      await proxy.close();
    }
  });
});
