import { describe, expect, it } from 'vitest';
import { frontmatterFields } from '../src/frontmatter.js';
import { declaredDependencies } from '../src/install/site.js';
import {
  type LockEntry,
  type Lockfile,
  linkDependants,
  type SiteEntry,
  serializeLockfile,
  unlockedDependency,
} from '../src/lockfile/lockfile.js';
import { parseLockfile } from '../src/lockfile/read.js';
import type { SkillFile } from '../src/skill-files.js';

// The pure parts of a site skill's dependencies (docs/discovery.md): what its SKILL.md declares, read
// without the registry's YAML parser, and how the lockfile records a site skill as a requirer. The
// install, update and remove of them, end to end: site-install.test.ts.

const SHA = 'a'.repeat(64);
const KEY = 'https://example.com#needs';

const skillMd = (frontmatter: string): SkillFile[] => [
  {
    path: 'SKILL.md',
    mode: '100644',
    content: Buffer.from(`---\nname: needs\ndescription: Needs things.\n${frontmatter}---\n\n# needs\n`),
  },
];

function read(frontmatter: string) {
  const notes: string[] = [];
  const dependencies = declaredDependencies('needs (https://example.com)', skillMd(frontmatter), (line) =>
    notes.push(line),
  );
  return { dependencies, notes };
}

describe('what a site skill declares in metadata.dependencies', () => {
  it('reads a comma-separated string, a block list and a flow list as the registry does', () => {
    const text = read(
      'metadata:\n  dependencies: "@acme/pdf@^1.2, @acme/csv , @acme/xlsx@latest, @acme/doc@1.0.0"\n',
    );
    expect(text).toEqual({
      dependencies: [
        { name: '@acme/pdf', range: '^1.2' },
        { name: '@acme/csv', range: null },
        { name: '@acme/xlsx', range: null },
        { name: '@acme/doc', range: '1.0.0' },
      ],
      notes: [],
    });
    const block = read(
      'metadata:\n  version: 2.0.0\n  dependencies:\n    - \'@acme/pdf@~2\'\n    - "@acme/csv"\nlicense: MIT\n',
    );
    expect(block.dependencies).toEqual([
      { name: '@acme/pdf', range: '~2' },
      { name: '@acme/csv', range: null },
    ]);
    const flow = read('metadata:\n  dependencies: ["@acme/pdf@>=1 <2", "@acme/csv"] # two\n');
    expect(flow.dependencies).toEqual([
      { name: '@acme/pdf', range: '>=1 <2' },
      { name: '@acme/csv', range: null },
    ]);
  });

  it('leaves out what it cannot read, with a warning; nothing declared is nothing', () => {
    const bad = read('metadata:\n  dependencies: "acme/pdf, @acme/csv@not-a-range, @acme/ok, @acme/ok@^2"\n');
    expect(bad.dependencies).toEqual([{ name: '@acme/ok', range: null }]);
    expect(bad.notes).toEqual([
      'warning: needs (https://example.com): dependency "acme/pdf" is not @scope/name[@range]; it was ignored',
      'warning: needs (https://example.com): dependency "@acme/csv@not-a-range" is not @scope/name[@range]; it was ignored',
      'warning: needs (https://example.com): dependency @acme/ok is listed more than once; the first is kept',
    ]);
    expect(read('')).toEqual({ dependencies: [], notes: [] });
    // Only under metadata: a top-level `dependencies` is not the field.
    expect(read('dependencies: "@acme/pdf"\n').dependencies).toEqual([]);
  });

  it('the upload reader keeps reading name, version and metadata.version', () => {
    const text =
      '---\nname: "kit"\nversion: 1.0.0\nmetadata:\n  dependencies:\n    - "@acme/pdf"\n  version: 1.2.0 # ours\n---\n';
    expect(frontmatterFields(text)).toEqual({
      name: 'kit',
      version: '1.0.0',
      metadataVersion: '1.2.0',
      dependencies: ['@acme/pdf'],
    });
    // Any YAML the registry's indexer reads: a folded scalar, an alias; not YAML at all gives nothing.
    const folded =
      '---\nname: kit\nmetadata:\n  pinned: &deps ["@acme/pdf", "@acme/csv@^1"]\n  dependencies: *deps\n---\n';
    expect(frontmatterFields(folded).dependencies).toEqual(['@acme/pdf', '@acme/csv@^1']);
    expect(
      frontmatterFields('---\nmetadata:\n  dependencies: >-\n    @acme/pdf,\n    @acme/csv\n---\n'),
    ).toEqual({
      dependencies: '@acme/pdf, @acme/csv',
    });
    expect(frontmatterFields('---\nname: [unclosed\n---\n')).toEqual({});
  });
});

describe('a site skill in the lockfile’s dependency graph', () => {
  const base: LockEntry = {
    name: '@acme/base',
    version: '1.1.0',
    requested: null,
    integrity: `sha512-${'A'.repeat(86)}==`,
    sourceRepo: 'acme/skills',
    sourcePath: 'base',
    sourceCommit: null,
    agents: ['universal'],
    dirs: ['.agents/skills/base'],
    files: { 'SKILL.md': { mode: '100644', sha256: SHA } },
    direct: false,
  };
  const needs: SiteEntry = {
    source: { kind: 'well-known', url: 'https://example.com', skill: 'needs' },
    index: 'https://example.com/.well-known/agent-skills/index.json',
    type: 'skill-md',
    url: 'https://example.com/.well-known/agent-skills/needs/SKILL.md',
    digest: `sha256:${SHA}`,
    agents: ['universal'],
    dirs: ['.agents/skills/needs'],
    files: { 'SKILL.md': { mode: '100644', sha256: SHA } },
    dependencies: { '@acme/base': '^1.2' },
  };
  const lockOf = (): Lockfile => ({
    lockfileVersion: 2,
    packages: { '@acme/base': { ...base } },
    sites: { [KEY]: { ...needs } },
  });

  it('is what its dependencies are a dependency of, and reads back as written', () => {
    const lock = lockOf();
    linkDependants(lock);
    expect(lock.packages['@acme/base']?.dependencyOf).toEqual([KEY]);
    const text = serializeLockfile(lock);
    expect(JSON.parse(text).sites[KEY].dependencies).toEqual({ '@acme/base': '^1.2' });
    expect(serializeLockfile(parseLockfile(text, 'pkgreg-lock.json', false).lock as Lockfile)).toBe(text);
  });

  it('a restore refuses a lockfile without what it needs, naming how to install it again', () => {
    const lock = lockOf();
    expect(
      unlockedDependency(lock, (version, range) => range === '^1.2' && version >= '1.2.0'),
    ).toMatchObject({
      by: { key: KEY, label: KEY, install: 'https://example.com --skill needs' },
      name: '@acme/base',
      range: '^1.2',
      locked: '1.1.0',
    });
    (lock.packages['@acme/base'] as LockEntry).version = '1.2.0';
    expect(unlockedDependency(lock, (version) => version === '1.2.0')).toBeUndefined();
  });
});
