import { describe, expect, it } from 'vitest';
import { CliError } from '../src/errors.js';
import { dependencyFolders, fits, type GraphNode, refuseCycles } from '../src/install/resolve.js';
import {
  type LockEntry,
  type Lockfile,
  linkDependants,
  serializeLockfile,
  unlockedDependency,
} from '../src/lockfile/lockfile.js';
import { parseLockfile } from '../src/lockfile/read.js';
import { parsePackageArg } from '../src/names.js';
import { fixtureVersion } from './helpers/archive.js';

// Pure parts of dependencies in the CLI (README: Dependencies): the lockfile's fields, the graph's
// folders and cycles. The resolution against a registry is in dependencies.test.ts.

const SHA = 'a'.repeat(64);
const INTEGRITY = `sha512-${'A'.repeat(86)}==`;

function entry(name: string, version: string, extra: Partial<LockEntry> = {}): LockEntry {
  const short = name.split('/')[1] as string;
  return {
    name,
    version,
    requested: null,
    integrity: INTEGRITY,
    sourceRepo: 'acme/skills',
    sourcePath: short,
    sourceCommit: null,
    agents: ['universal'],
    dirs: [`.agents/skills/${short}`],
    files: { 'SKILL.md': { mode: '100644', sha256: SHA } },
    ...extra,
  };
}

const lockOf = (...entries: LockEntry[]): Lockfile => ({
  lockfileVersion: 2,
  packages: Object.fromEntries(entries.map((e) => [e.name, e])),
});

describe('the lockfile records the dependency graph', () => {
  it('writes dependencies, dependencyOf and direct only when they say something, and reads them back', () => {
    const lock = lockOf(
      entry('@acme/report', '1.0.0', { dependencies: { '@acme/pdf': '^1.2', '@acme/csv': null } }),
      entry('@acme/pdf', '1.4.0', { direct: false }),
      entry('@acme/csv', '2.0.0', { direct: true }),
    );
    linkDependants(lock);
    const text = serializeLockfile(lock);
    const json = JSON.parse(text);
    expect(json.packages['@acme/report'].dependencies).toEqual({ '@acme/csv': null, '@acme/pdf': '^1.2' });
    expect(Object.keys(json.packages['@acme/report'].dependencies)).toEqual(['@acme/csv', '@acme/pdf']);
    expect(json.packages['@acme/report']).not.toHaveProperty('dependencyOf');
    expect(json.packages['@acme/report']).not.toHaveProperty('direct');
    expect(json.packages['@acme/pdf']).toMatchObject({ direct: false, dependencyOf: ['@acme/report'] });
    expect(json.packages['@acme/csv']).not.toHaveProperty('direct');
    const read = parseLockfile(text, 'pkgreg-lock.json', false);
    expect(serializeLockfile(read.lock as Lockfile)).toBe(text);
  });

  it('a lockfile without the fields (written before dependencies) is unchanged by a round trip', () => {
    const text = serializeLockfile(lockOf(entry('@acme/pdf', '1.0.0')));
    expect(text).not.toMatch(/dependenc|direct/);
    expect(serializeLockfile(parseLockfile(text, 'pkgreg-lock.json', false).lock as Lockfile)).toBe(text);
  });

  it('refuses a dependency that is not @scope/name or whose range is not semver', () => {
    const bad = (dependencies: Record<string, string | null>) => {
      try {
        parseLockfile(
          JSON.stringify(lockOf(entry('@acme/report', '1.0.0', { dependencies }))),
          'pkgreg-lock.json',
          false,
        );
      } catch (error) {
        expect(error).toBeInstanceOf(CliError);
        return (error as CliError).message;
      }
      return 'accepted';
    };
    expect(bad({ 'acme/pdf': '^1' })).toContain('dependencies.acme/pdf: Invalid key in record');
    expect(bad({ '@acme/pdf': 'not a range' })).toContain('must be a semver range');
    expect(bad({ '@acme/pdf': '^1' })).toBe('accepted');
  });

  it('dependencyOf follows the others’ dependencies; a missing or out-of-range dependency is found', () => {
    const lock = lockOf(
      entry('@acme/report', '1.0.0', { dependencies: { '@acme/pdf': '^1.2' }, dependencyOf: ['@stale/x'] }),
      entry('@acme/pdf', '1.1.0'),
    );
    linkDependants(lock);
    expect(lock.packages['@acme/report']?.dependencyOf).toBeUndefined();
    expect(lock.packages['@acme/pdf']?.dependencyOf).toEqual(['@acme/report']);
    expect(unlockedDependency(lock, fits)).toMatchObject({
      name: '@acme/pdf',
      range: '^1.2',
      locked: '1.1.0',
    });
    (lock.packages['@acme/pdf'] as LockEntry).version = '1.2.0';
    expect(unlockedDependency(lock, fits)).toBeUndefined();
    delete lock.packages['@acme/pdf'];
    expect(unlockedDependency(lock, fits)).toMatchObject({ name: '@acme/pdf', locked: null });
  });
});

async function node(
  name: string,
  version: string,
  dependencies: Array<{ name: string; range: string | null }>,
  requiredBy: string[] = [],
): Promise<GraphNode> {
  const ref = parsePackageArg(name);
  const detail = await fixtureVersion(ref.name, version, [{ path: 'SKILL.md', content: `# ${ref.name}\n` }]);
  return {
    ref,
    version: { ...detail.manifest, scope: ref.scope, dependencies },
    source: { sourceRepo: 'acme/skills', sourcePath: ref.name },
    root: requiredBy.length === 0,
    requiredBy,
  };
}

describe('the graph', () => {
  it('a null range accepts any version; ranges include pre-releases (pseudo-versions)', () => {
    expect(fits('2.0.0', null)).toBe(true);
    expect(fits('1.2.4-0.20261125120000-3f2a9c1b7e04', '^1.2')).toBe(true);
    expect(fits('2.0.0', '^1.2')).toBe(false);
  });

  it('refuses a cycle, naming it from where it starts', async () => {
    const a = await node('@acme/a', '1.0.0', [{ name: '@acme/b', range: null }]);
    const b = await node('@acme/b', '2.0.0', [{ name: '@acme/c', range: '^3' }], ['@acme/a']);
    const c = await node('@acme/c', '3.1.0', [{ name: '@acme/b', range: '^2' }], ['@acme/b']);
    expect(() => refuseCycles([a, b, c])).toThrow(
      'Dependency cycle: @acme/b@2.0.0 -> @acme/c@3.1.0 -> @acme/b@2.0.0',
    );
    const d = await node('@acme/d', '1.0.0', [{ name: '@acme/c', range: null }], ['@acme/a']);
    const e = await node('@acme/c', '3.1.0', [], ['@acme/b', '@acme/d']);
    expect(() =>
      refuseCycles([a, { ...b, version: { ...b.version, dependencies: [] } }, d, e]),
    ).not.toThrow();
  });

  it('puts a dependency beside every folder of what needs it, after its locked folders', async () => {
    const root = await node('@acme/report', '1.0.0', [{ name: '@acme/pdf', range: null }]);
    const pdf = await node('@acme/pdf', '1.0.0', [{ name: '@other/fonts', range: null }], ['@acme/report']);
    const fonts = await node('@other/fonts', '1.0.0', [], ['@acme/pdf']);
    const lock = lockOf(entry('@other/fonts', '0.9.0', { dirs: ['skills/fonts'], agents: ['openclaw'] }));
    const folders = dependencyFolders(
      [root, pdf, fonts],
      lock,
      new Map([
        [
          '@acme/report',
          { dirs: ['.claude/skills/report', '.agents/skills/report'], agents: ['claude-code', 'codex'] },
        ],
      ]),
      false,
    );
    expect(folders.get('@acme/pdf')).toEqual({
      dirs: ['.claude/skills/pdf', '.agents/skills/pdf'],
      agents: ['claude-code', 'codex'],
    });
    expect(folders.get('@other/fonts')).toEqual({
      dirs: ['skills/fonts', '.claude/skills/fonts', '.agents/skills/fonts'],
      agents: ['openclaw', 'claude-code', 'codex'],
    });
    // --frozen: where the lockfile says, nothing more.
    expect(dependencyFolders([root, pdf, fonts], lock, new Map(), true).get('@other/fonts')).toEqual({
      dirs: ['skills/fonts'],
      agents: ['openclaw'],
    });
  });
});
