import { existsSync } from 'node:fs';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { LockEntry } from '../src/lockfile/lockfile.js';
import { type CliResult, runCli, tempDir } from './helpers/cli.js';
import { type SkillFixture, updateSkill } from './helpers/seed.js';
import { useSeededRegistry } from './helpers/seeded-registry.js';

// Skill dependencies (README: Dependencies), end to end: the built CLI as a real process, the real
// registry-api on a real Postgres, skills committed to real git repositories and indexed by the real
// indexer with their `metadata.dependencies`.

const skill = (
  repo: string,
  name: string,
  version: string,
  dependencies?: string,
  owner = 'deps',
): SkillFixture => ({
  owner,
  repo,
  path: `skills/${name}`,
  name,
  description: `The ${name} skill`,
  version,
  ...(dependencies === undefined ? {} : { dependencies }),
});

const BASE = skill('lib', 'base', '1.0.0');
const FMT = skill('lib', 'fmt', '1.0.0', '@deps/base@^1');
const REPORT = skill('app', 'report', '1.0.0', '@deps/fmt, @deps/base@^1.0');
const LEFT = skill('app', 'left', '1.0.0', '@deps/base@^1');
const RIGHT = skill('app', 'right', '1.0.0', '@deps/base@^2');
const NEEDS_MISSING = skill('app', 'lost', '1.0.0', '@deps/nowhere@^1');
const CYCLE_A = skill('loop', 'ping', '1.0.0', '@cyc/pong', 'cyc');
const CYCLE_B = skill('loop', 'pong', '1.0.0', '@cyc/ping@^1', 'cyc');
const UP_APP = skill('tools', 'app', '1.0.0', undefined, 'up');
const UP_LIB = skill('tools', 'lib', '1.0.0', undefined, 'up');

const { database, registry } = useSeededRegistry([
  BASE,
  FMT,
  REPORT,
  LEFT,
  RIGHT,
  NEEDS_MISSING,
  CYCLE_A,
  CYCLE_B,
  UP_APP,
  UP_LIB,
]);
let home: string;

beforeAll(async () => {
  home = await tempDir('home');
  // base: 1.0.0, 1.1.0, 1.2.0 (yanked below), then 2.0.0 — the latest.
  for (const version of ['1.1.0', '1.2.0', '2.0.0']) await updateSkill(database, { ...BASE, version });
  await yank('deps', 'base', '1.2.0');
}, 120_000);

/** A yank as the registry's owner endpoint records it (its proofs are publish.test's business). */
async function yank(scope: string, name: string, version: string): Promise<void> {
  const row = await database.db
    .selectFrom('package_versions as v')
    .innerJoin('packages as p', 'p.id', 'v.package_id')
    .select('v.id')
    .where('p.scope', '=', scope)
    .where('p.name', '=', name)
    .where('v.version', '=', version)
    .executeTakeFirstOrThrow();
  await database.db
    .insertInto('package_version_yanks')
    .values({ version_id: row.id, reason: 'broken' })
    .execute();
}

function cli(args: string[], cwd: string): Promise<CliResult> {
  return runCli(['--registry', registry.url, ...args], { cwd, home, env: { DO_NOT_TRACK: '1' } });
}

async function lockOf(cwd: string): Promise<{ packages: Record<string, LockEntry> }> {
  return JSON.parse(await readFile(join(cwd, 'pkgreg-lock.json'), 'utf8'));
}

const versionIn = async (dir: string) =>
  /version: (\S+)/.exec(await readFile(join(dir, 'SKILL.md'), 'utf8'))?.[1];

describe('install installs what a skill needs, and locks it', () => {
  let cwd: string;

  beforeAll(async () => {
    cwd = await tempDir('deps-project');
  });

  it('resolves each range breadth-first to one version per package (never a yanked one)', async () => {
    const result = await cli(['install', '@deps/report', '--agent', 'claude-code'], cwd);
    expect(result.code).toBe(0);
    expect(result.stderr).not.toContain('warning');
    expect(result.stdout.split('\n').filter(Boolean)).toEqual([
      'installed @deps/report@1.0.0 -> .claude/skills/report',
      'installed @deps/fmt@1.0.0 -> .claude/skills/fmt (dependency of @deps/report)',
      // ^1.0 and ^1: the highest 1.x not yanked (1.2.0 is), not the latest 2.0.0.
      'installed @deps/base@1.1.0 -> .claude/skills/base (dependency of @deps/report, @deps/fmt)',
    ]);
    expect(await versionIn(join(cwd, '.claude/skills/base'))).toBe('1.1.0');
    expect(await versionIn(join(cwd, '.claude/skills/fmt'))).toBe('1.0.0');
  });

  it('locks every resolved version, marking what was installed as a dependency and of whom', async () => {
    const { packages } = await lockOf(cwd);
    expect(Object.keys(packages)).toEqual(['@deps/base', '@deps/fmt', '@deps/report']);
    expect(packages['@deps/report']).toMatchObject({
      version: '1.0.0',
      requested: null,
      dependencies: { '@deps/base': '^1.0', '@deps/fmt': null },
      dirs: ['.claude/skills/report'],
      agents: ['claude-code'],
    });
    expect(packages['@deps/report']).not.toHaveProperty('direct');
    expect(packages['@deps/report']).not.toHaveProperty('dependencyOf');
    expect(packages['@deps/fmt']).toMatchObject({
      version: '1.0.0',
      requested: null,
      direct: false,
      dependencies: { '@deps/base': '^1' },
      dependencyOf: ['@deps/report'],
      dirs: ['.claude/skills/fmt'],
    });
    expect(packages['@deps/base']).toMatchObject({
      version: '1.1.0',
      direct: false,
      dependencyOf: ['@deps/fmt', '@deps/report'],
    });
    expect(packages['@deps/base']).not.toHaveProperty('dependencies');
  });

  it('--frozen restores every locked version exactly, dependencies included, after the registry moved on', async () => {
    const before = await readFile(join(cwd, 'pkgreg-lock.json'), 'utf8');
    await updateSkill(database, { ...BASE, version: '1.3.0' });
    await rm(join(cwd, '.claude'), { recursive: true, force: true });
    const restored = await cli(['install', '--frozen'], cwd);
    expect(restored.code).toBe(0);
    expect(restored.stdout.split('\n').filter(Boolean).sort()).toEqual([
      'installed @deps/base@1.1.0 -> .claude/skills/base',
      'installed @deps/fmt@1.0.0 -> .claude/skills/fmt',
      'installed @deps/report@1.0.0 -> .claude/skills/report',
    ]);
    expect(await versionIn(join(cwd, '.claude/skills/base'))).toBe('1.1.0');
    expect(await readFile(join(cwd, 'pkgreg-lock.json'), 'utf8')).toBe(before);

    // Named with --frozen: the dependencies come from the lockfile too, nothing is rewritten.
    const named = await cli(['install', '@deps/report', '--frozen'], cwd);
    expect(named.code).toBe(0);
    expect(await readFile(join(cwd, 'pkgreg-lock.json'), 'utf8')).toBe(before);
  });

  it('a lockfile that lacks what an entry needs is refused, not half restored', async () => {
    const other = await tempDir('deps-broken-lock');
    const lock = await lockOf(cwd);
    delete lock.packages['@deps/base'];
    await writeFile(join(other, 'pkgreg-lock.json'), JSON.stringify(lock));
    const result = await cli(['install', '--frozen'], other);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(
      'pkgreg-lock.json does not lock @deps/base, which @deps/fmt@1.0.0 needs (^1); run "pkgreg install @deps/fmt"',
    );
  });

  it('a re-install keeps a dependency at its locked version while every range allows it', async () => {
    const again = await cli(['install', '@deps/report'], cwd);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain('up to date @deps/base@1.1.0 (dependency of @deps/report, @deps/fmt)');
    expect((await lockOf(cwd)).packages['@deps/base']?.version).toBe('1.1.0');
  });

  it('remove refuses a package another installed one needs, naming it', async () => {
    const result = await cli(['remove', '@deps/fmt'], cwd);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(
      '@deps/fmt is needed by @deps/report; remove that too ("pkgreg remove @deps/fmt @deps/report")',
    );
    expect(existsSync(join(cwd, '.claude/skills/fmt'))).toBe(true);
  });

  it('remove of the root takes the dependencies nothing else needs; one you named stays', async () => {
    // base named by you now: it stays yours when report goes.
    const named = await cli(['install', '@deps/base@^1'], cwd);
    expect(named.code).toBe(0);
    expect((await lockOf(cwd)).packages['@deps/base']).toMatchObject({ version: '1.3.0', requested: '^1' });
    expect((await lockOf(cwd)).packages['@deps/base']).not.toHaveProperty('direct');

    const result = await cli(['remove', '@deps/report'], cwd);
    expect(result.code).toBe(0);
    expect(result.stdout.split('\n').filter(Boolean)).toEqual([
      'removed @deps/report (.claude/skills/report)',
      'removed @deps/fmt (.claude/skills/fmt): a dependency of @deps/report that nothing else needs',
    ]);
    expect(Object.keys((await lockOf(cwd)).packages)).toEqual(['@deps/base']);
    expect((await lockOf(cwd)).packages['@deps/base']).not.toHaveProperty('dependencyOf');
    expect(existsSync(join(cwd, '.claude/skills/base'))).toBe(true);
    expect(existsSync(join(cwd, '.claude/skills/fmt'))).toBe(false);
  });
});

describe('install refuses what cannot be installed, writing nothing', () => {
  it('a conflict names both requirers and both ranges', async () => {
    const cwd = await tempDir('deps-conflict');
    const result = await cli(['install', '@deps/left', '@deps/right'], cwd);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(
      'Dependency conflict: @deps/base is needed at ^1 by @deps/left@1.0.0 and at ^2 by @deps/right@1.0.0',
    );
    expect(existsSync(join(cwd, 'pkgreg-lock.json'))).toBe(false);
    expect(existsSync(join(cwd, '.agents'))).toBe(false);

    // Alone, each is fine; then the other conflicts with what the lockfile holds.
    expect((await cli(['install', '@deps/right'], cwd)).code).toBe(0);
    expect((await lockOf(cwd)).packages['@deps/base']?.version).toBe('2.0.0');
    const later = await cli(['install', '@deps/left'], cwd);
    expect(later.code).toBe(1);
    expect(later.stderr).toContain(
      'Dependency conflict: @deps/base is needed at ^1 by @deps/left@1.0.0 and at ^2 by @deps/right@1.0.0 (pkgreg-lock.json)',
    );
  });

  it('a dependency you pinned yourself is never moved: the conflict names you', async () => {
    const cwd = await tempDir('deps-pinned');
    const result = await cli(['install', '@deps/base@2.0.0', '@deps/fmt'], cwd);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(
      'Dependency conflict: @deps/fmt@1.0.0 needs @deps/base@^1, but you asked for @deps/base@2.0.0',
    );
  });

  it('a cycle is refused with a message naming it', async () => {
    const cwd = await tempDir('deps-cycle');
    const result = await cli(['install', '@cyc/ping'], cwd);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(
      'Dependency cycle: @cyc/ping@1.0.0 -> @cyc/pong@1.0.0 -> @cyc/ping@1.0.0',
    );
    expect(existsSync(join(cwd, 'pkgreg-lock.json'))).toBe(false);
  });

  it('a dependency the registry does not have is not found (exit 3), naming who needs it', async () => {
    const cwd = await tempDir('deps-missing');
    const result = await cli(['install', '@deps/lost'], cwd);
    expect(result.code).toBe(3);
    expect(result.stderr).toContain('error: @deps/nowhere: Package not found (needed by @deps/lost@1.0.0)');
    expect(existsSync(join(cwd, 'pkgreg-lock.json'))).toBe(false);
  });

  it('--frozen with a dependency the lockfile lacks is exit 5', async () => {
    const cwd = await tempDir('deps-frozen');
    expect((await cli(['install', '@deps/fmt'], cwd)).code).toBe(0);
    const lock = await lockOf(cwd);
    delete lock.packages['@deps/base'];
    delete lock.packages['@deps/fmt']?.dependencies;
    await writeFile(join(cwd, 'pkgreg-lock.json'), JSON.stringify(lock));
    const result = await cli(['install', '@deps/fmt', '--frozen'], cwd);
    expect(result.code).toBe(5);
    expect(result.stderr).toContain(
      '--frozen: @deps/base (needed by @deps/fmt@1.0.0) is not in pkgreg-lock.json',
    );
  });
});

describe('info shows the dependency tree', () => {
  it('each range with the version it resolves to now, below what needs it', async () => {
    const cwd = await tempDir('deps-info');
    const result = await cli(['info', '@deps/report'], cwd);
    expect(result.code).toBe(0);
    const lines = result.stdout.split('\n');
    const at = lines.findIndex((line) => line.startsWith('Dependencies:'));
    expect(lines.slice(at, at + 4)).toEqual([
      'Dependencies:',
      '  @deps/fmt latest -> 1.0.0',
      '    @deps/base ^1 -> 1.3.0',
      '  @deps/base ^1.0 -> 1.3.0',
    ]);
    const cycle = await cli(['info', '@cyc/ping'], cwd);
    expect(cycle.stdout).toContain(
      '  @cyc/pong latest -> 1.0.0\n    @cyc/ping ^1 -> 1.0.0 (cycle: install refuses it)\n',
    );
    const lost = await cli(['info', '@deps/lost'], cwd);
    expect(lost.code).toBe(0);
    expect(lost.stdout).toContain('  @deps/nowhere ^1 -> unresolved (@deps/nowhere: Package not found)');
  });

  it('--json includes the tree', async () => {
    const result = await cli(['info', '@deps/fmt', '--json'], await tempDir('deps-info-json'));
    expect(result.code).toBe(0);
    const json = JSON.parse(result.stdout);
    expect(json.dependencies).toEqual([{ name: '@deps/base', range: '^1', resolves: true }]);
    expect(json.depCount).toBe(1);
    expect(json.dependencyTree).toEqual([
      {
        name: '@deps/base',
        range: '^1',
        version: '1.3.0',
        error: null,
        cycle: false,
        deduped: false,
        dependencies: [],
      },
    ]);
  });
});

describe('update and outdated keep to what needs a package', () => {
  it('update installs what a new version needs; outdated keeps a dependency within its requirers’ ranges', async () => {
    const cwd = await tempDir('deps-update');
    expect((await cli(['install', '@up/app'], cwd)).code).toBe(0);
    await updateSkill(database, { ...UP_APP, version: '1.1.0', dependencies: '@up/lib@^1' });
    const updated = await cli(['update'], cwd);
    expect(updated.code).toBe(0);
    expect(updated.stdout.split('\n').filter(Boolean)).toEqual([
      'updated @up/app 1.0.0 -> 1.1.0',
      'installed @up/lib@1.0.0 -> .agents/skills/lib (dependency of @up/app)',
    ]);
    expect((await lockOf(cwd)).packages['@up/lib']).toMatchObject({
      version: '1.0.0',
      direct: false,
      dependencyOf: ['@up/app'],
    });

    await updateSkill(database, { ...UP_LIB, version: '2.0.0' });
    const outdated = await cli(['outdated', '--json'], cwd);
    expect(outdated.code).toBe(0);
    expect(JSON.parse(outdated.stdout)).toContainEqual(
      expect.objectContaining({ name: '@up/lib', current: '1.0.0', wanted: '1.0.0', latest: '2.0.0' }),
    );
    const again = await cli(['update'], cwd);
    expect(again.stdout).toContain('All packages are up to date.');
    expect((await lockOf(cwd)).packages['@up/lib']?.version).toBe('1.0.0');
  });
});
