import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { AGENTS, detectAgents, findAgent, rootsFor, skillsDirOf } from '../src/agents.js';
import { loadEnv } from '../src/env.js';
import { CliError } from '../src/errors.js';
import { type Lockfile, lockedFilesOf, serializeLockfile } from '../src/lockfile/lockfile.js';
import { installedPackages, parseLockfile } from '../src/lockfile/read.js';
import { type LockEntryV1, matchesV1Entry, upgradeV1Entry } from '../src/lockfile/v1.js';
import { parsePackageSpec } from '../src/names.js';
import { fixtureVersion } from './helpers/archive.js';
import { tempDir } from './helpers/cli.js';

// Pure parts of the CLI: the agents table, lockfile parsing and upgrading, version specs, environment.

describe('agents table', () => {
  it('knows at least 30 agents, each with a project and a global folder, ids unique', () => {
    expect(AGENTS.length).toBeGreaterThanOrEqual(30);
    expect(new Set(AGENTS.map((a) => a.id)).size).toBe(AGENTS.length);
    for (const agent of AGENTS) {
      expect(agent.projectDir).toMatch(/^(?:[a-z.][\w./-]*\/)?skills$/);
      expect(agent.globalDir.path).toMatch(/skills$/);
    }
  });

  it("keeps pkgreg 0.1's names and takes the ecosystem's ids and aliases", () => {
    const expected: Record<string, string> = {
      claude: 'claude-code',
      'claude-code': 'claude-code',
      codex: 'codex',
      cursor: 'cursor',
      generic: 'universal',
      'github-copilot': 'github-copilot',
      copilot: 'github-copilot',
      'gemini-cli': 'gemini-cli',
      windsurf: 'windsurf',
      cline: 'cline',
      roo: 'roo',
      goose: 'goose',
      opencode: 'opencode',
      amp: 'amp',
      kiro: 'kiro-cli',
      'Claude-Code': 'claude-code',
    };
    for (const [name, id] of Object.entries(expected)) expect(findAgent(name)?.id, name).toBe(id);
    expect(findAgent('vim')).toBeUndefined();
  });

  it('puts project skills where each agent reads them: Codex reads .agents/skills, not .codex/skills', () => {
    const roots = rootsFor(loadEnv({ HOME: '/home/u' }), '/work/p');
    const project = (name: string) => skillsDirOf(findAgent(name) as never, roots, false);
    expect(project('codex')).toBe('/work/p/.agents/skills');
    expect(project('claude')).toBe('/work/p/.claude/skills');
    expect(project('generic')).toBe('/work/p/.agents/skills');
    expect(project('windsurf')).toBe('/work/p/.windsurf/skills');
    const global = (name: string, env: Record<string, string>) =>
      skillsDirOf(findAgent(name) as never, rootsFor(loadEnv({ HOME: '/home/u', ...env }), '/work/p'), true);
    expect(global('codex', {})).toBe('/home/u/.codex/skills');
    expect(global('codex', { CODEX_HOME: '/opt/codex' })).toBe('/opt/codex/skills');
    expect(global('claude', { CLAUDE_CONFIG_DIR: '/cfg/claude' })).toBe('/cfg/claude/skills');
    expect(global('goose', { XDG_CONFIG_HOME: '/xdg' })).toBe('/xdg/goose/skills');
    expect(global('windsurf', {})).toBe('/home/u/.codeium/windsurf/skills');
  });

  it('detects agents by their folders in the project or the home folder (home only for --global)', async () => {
    const home = await tempDir('detect-home');
    const project = await tempDir('detect-project');
    const roots = rootsFor(loadEnv({ HOME: home }), project);
    expect(detectAgents(roots, false)).toEqual([]);
    await mkdir(join(project, '.claude'));
    await mkdir(join(home, '.codex'));
    await writeFile(join(project, 'GEMINI.md'), '# notes');
    expect(detectAgents(roots, false).map((a) => a.id)).toEqual(['claude-code', 'codex', 'gemini-cli']);
    expect(detectAgents(roots, true).map((a) => a.id)).toEqual(['codex']);
  });
});

const SHA = 'a'.repeat(64);
const INTEGRITY = `sha512-${'A'.repeat(86)}==`;

function v2(entry: Partial<Lockfile['packages'][string]> = {}): unknown {
  return {
    lockfileVersion: 2,
    packages: {
      '@acme/pdf': {
        name: '@acme/pdf',
        version: '1.2.0',
        requested: '^1.2',
        integrity: INTEGRITY,
        sourceRepo: 'acme/skills',
        sourcePath: 'pdf',
        sourceCommit: null,
        agents: ['universal'],
        dirs: ['.agents/skills/pdf'],
        files: { 'SKILL.md': { mode: '100644', sha256: SHA }, 'run.sh': { mode: '100755', sha256: SHA } },
        ...entry,
      },
    },
  };
}

function parse(json: unknown, global = false) {
  return parseLockfile(JSON.stringify(json), 'pkgreg-lock.json', global);
}

function refusal(json: unknown, global = false): string {
  try {
    parse(json, global);
  } catch (error) {
    expect(error).toBeInstanceOf(CliError);
    expect((error as CliError).exitCode).toBe(1);
    return (error as CliError).message;
  }
  throw new Error('accepted');
}

describe('lockfile version 2', () => {
  it('round-trips: sorted, stable, trailing newline', () => {
    const read = parse(v2());
    expect(read.version).toBe(2);
    const text = serializeLockfile(read.lock as Lockfile);
    expect(text.endsWith('}\n')).toBe(true);
    expect(serializeLockfile(parse(JSON.parse(text)).lock as Lockfile)).toBe(text);
  });

  it('refuses folders and files that would leave the project, and other damage', () => {
    expect(refusal(v2({ dirs: ['../outside/pdf'] }))).toContain('unexpected folder ../outside/pdf');
    expect(refusal(v2({ dirs: ['/etc/pdf'] }))).toContain('unexpected folder /etc/pdf');
    expect(refusal(v2({ dirs: ['pdf'] }))).toContain('unexpected folder pdf');
    expect(refusal(v2({ dirs: ['.agents/skills/other'] }))).toContain('unexpected folder');
    expect(refusal(v2({ dirs: ['.git/pdf'] }))).toContain('unexpected folder .git/pdf');
    expect(refusal(v2({ dirs: ['sub/.GIT/hooks/pdf'] }))).toContain('unexpected folder');
    expect(
      refusal(
        v2({
          files: { 'SKILL.md': { mode: '100644', sha256: SHA }, '../x': { mode: '100644', sha256: SHA } },
        }),
      ),
    ).toContain('unexpected path ../x');
    expect(refusal(v2({ files: { 'a.md': { mode: '100644', sha256: SHA } } }))).toContain(
      'SKILL.md is missing',
    );
    expect(refusal(v2({ version: 'one' }))).toContain('version: must be a semver version');
    expect(refusal(v2({ requested: 'soon' }))).toContain('must be a semver range');
    expect(refusal(v2({ integrity: 'sha1-abc' }))).toContain('integrity');
    expect(refusal({ lockfileVersion: 3, packages: {} })).toContain('newer than this pkgreg understands');
  });

  it('the global lockfile may name absolute folders (CODEX_HOME outside home)', () => {
    expect(parse(v2({ dirs: ['/opt/codex/skills/pdf'] }), true).version).toBe(2);
    expect(refusal(v2({ dirs: ['/opt/codex/skills/../pdf'] }), true)).toContain('unexpected folder');
  });
});

describe('lockfile version 1 (pkgreg 0.1): read and upgraded', () => {
  const skill = '---\nname: pdf\n---\n# PDF\n';
  async function v1Entry(agents: LockEntryV1['agents']): Promise<LockEntryV1> {
    const { manifest } = await fixtureVersion('pdf', '1.0.0', [{ path: 'SKILL.md', content: skill }]);
    const file = manifest.files[0];
    return {
      name: '@acme/pdf',
      sourceRepo: 'acme/skills',
      sourceRef: 'main',
      sourcePath: 'pdf',
      lastCommitSha: file?.gitBlobSha ?? null,
      sha256: file?.sha256 ?? '',
      agents,
      paths: agents.map(
        (a) =>
          `${{ claude: '.claude', codex: '.codex', cursor: '.cursor', generic: '.agents' }[a]}/skills/pdf/SKILL.md`,
      ),
    };
  }

  it('parses, and lists its packages without a version', async () => {
    const entry = await v1Entry(['claude', 'codex']);
    const read = parse({ lockfileVersion: 1, packages: { '@acme/pdf': entry } });
    expect(read.version).toBe(1);
    expect(installedPackages(read)).toEqual([
      {
        name: '@acme/pdf',
        version: null,
        requested: null,
        agents: ['claude-code', 'codex'],
        dirs: ['.claude/skills/pdf', '.codex/skills/pdf'],
        files: { 'SKILL.md': { mode: '100644', sha256: entry.sha256 } },
        dependencies: [],
        dependencyOf: [],
        direct: true,
      },
    ]);
    const hostile = { ...entry, paths: ['../../.bashrc'] };
    expect(refusal({ lockfileVersion: 1, packages: { '@acme/pdf': hostile } })).toContain(
      'unexpected path ../../.bashrc',
    );
  });

  it('matches the version whose SKILL.md has the locked sha256 or git blob id, and upgrades to it', async () => {
    const entry = await v1Entry(['codex', 'generic']);
    const same = await fixtureVersion('pdf', '1.0.0', [
      { path: 'SKILL.md', content: skill },
      { path: 'run.sh', content: 'echo', executable: true },
    ]);
    const other = await fixtureVersion('pdf', '1.1.0', [{ path: 'SKILL.md', content: `${skill}more\n` }]);
    expect(matchesV1Entry(entry, same.manifest)).toBe(true);
    expect(matchesV1Entry(entry, other.manifest)).toBe(false);
    expect(matchesV1Entry({ ...entry, sha256: SHA }, same.manifest)).toBe(true);
    expect(matchesV1Entry({ ...entry, sha256: SHA, lastCommitSha: null }, same.manifest)).toBe(false);
    const upgraded = upgradeV1Entry(entry, same.manifest, (id) =>
      id === 'codex' ? '.agents/skills/pdf' : `.${id}/pdf`,
    );
    expect(upgraded).toEqual({
      name: '@acme/pdf',
      version: '1.0.0',
      requested: null,
      integrity: same.manifest.integrity,
      sourceRepo: 'acme/skills',
      sourcePath: 'pdf',
      sourceCommit: null,
      agents: ['codex', 'universal'],
      dirs: ['.agents/skills/pdf', '.universal/pdf'],
      files: lockedFilesOf(same.manifest),
    });
  });
});

describe('version specs on the command line', () => {
  it('reads latest, exact versions and ranges; anything else is a usage error (exit 2)', () => {
    expect(parsePackageSpec('@acme/pdf').spec).toEqual({ kind: 'latest' });
    expect(parsePackageSpec('@acme/pdf').typed).toBe(false);
    expect(parsePackageSpec('@acme/pdf@latest')).toMatchObject({
      spec: { kind: 'latest' },
      requested: null,
      typed: true,
    });
    expect(parsePackageSpec('@acme/pdf@1.2.0')).toMatchObject({
      spec: { kind: 'exact', version: '1.2.0' },
      requested: '1.2.0',
    });
    expect(parsePackageSpec('@acme/pdf@0.0.0-20261125120000-abcdef012345').spec).toEqual({
      kind: 'exact',
      version: '0.0.0-20261125120000-abcdef012345',
    });
    expect(parsePackageSpec('@acme/pdf@^1.2')).toMatchObject({
      spec: { kind: 'range', range: '^1.2' },
      requested: '^1.2',
    });
    for (const bad of ['@acme/pdf@', '@acme/pdf@next', '@acme/pdf@1.2.3.4', '@acme/pdf@1..2']) {
      expect(() => parsePackageSpec(bad), bad).toThrow(/Invalid version/);
    }
    expect(() => parsePackageSpec('@Acme/pdf@1.0.0')).toThrow(/Invalid package name/);
  });
});

describe('environment', () => {
  it('DO_NOT_TRACK: any value but empty, 0, false or no turns tracking off', () => {
    for (const [value, off] of [
      [undefined, false],
      ['', false],
      ['0', false],
      ['false', false],
      ['no', false],
      ['1', true],
      ['true', true],
      ['yes', true],
    ] as const) {
      expect(loadEnv({ HOME: '/h', DO_NOT_TRACK: value }).doNotTrack, String(value)).toBe(off);
    }
  });
});
