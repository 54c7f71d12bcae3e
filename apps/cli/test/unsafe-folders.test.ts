import { existsSync } from 'node:fs';
import { cp, mkdir, readFile, rename, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { type CliResult, type RunOptions, runCli, tempDir } from './helpers/cli.js';
import { snapshot, tree } from './helpers/folders.js';
import { type SkillFixture, updateSkill } from './helpers/seed.js';
import { useSeededRegistry } from './helpers/seeded-registry.js';

// Issue 26: the CLI never writes or deletes outside the folder it means. A cloned project may commit a
// symbolic link and a lockfile entry under it; every folder install, update and remove touches is
// checked on disk first (exit 5), whatever the link's shape. Real registry, real file system, the
// built CLI as a process.

const PDF: SkillFixture = {
  owner: 'acme',
  repo: 'unsafe',
  path: 'pdf-tools',
  name: 'pdf-tools',
  description: 'Extract text from PDF files',
  extraFiles: {
    'scripts/extract.sh': { content: '#!/bin/sh\necho extract\n', executable: true },
    'references/guide.md': '# Guide\n',
  },
};
const MOVING: SkillFixture = {
  owner: 'acme',
  repo: 'unsafe',
  path: 'moving',
  name: 'moving',
  description: 'A skill that gets a new version',
};

const { database, registry } = useSeededRegistry([PDF, MOVING]);
let home: string;
let genuineLock: string;

beforeAll(async () => {
  home = await tempDir('home');
  // A lockfile as a real install writes it, for the cloned projects below to commit.
  const genuine = await tempDir('genuine');
  expect((await cli(['install', '@acme/pdf-tools', '--agent', 'claude'], genuine)).code).toBe(0);
  genuineLock = await readFile(join(genuine, 'pkgreg-lock.json'), 'utf8');
});

function cli(args: string[], cwd: string, options: Partial<RunOptions> = {}): Promise<CliResult> {
  return runCli(['--registry', registry.url, ...args], {
    cwd,
    home,
    ...options,
    env: { DO_NOT_TRACK: '1', ...options.env },
  });
}

interface Layout {
  root: string;
  project: string;
  outside: string;
}

/** A project and, beside it, a folder of the user's it must never touch. */
async function layout(): Promise<Layout> {
  const root = await tempDir('unsafe');
  const project = join(root, 'project');
  const outside = join(root, 'outside');
  await mkdir(project);
  await mkdir(join(outside, 'mine'), { recursive: true });
  await writeFile(join(outside, 'precious.txt'), 'do not touch\n');
  await writeFile(join(outside, 'mine/SKILL.md'), 'my own skill\n');
  return { root, project, outside };
}

/** The lockfile of a real install, with its one entry's folders moved to `dirs`. */
function lockWith(dirs: string[]): string {
  const lock = JSON.parse(genuineLock);
  lock.packages['@acme/pdf-tools'].dirs = dirs;
  return JSON.stringify(lock, null, 2);
}

/** Everything under the layout's root, links and files with their content, folders too. */
async function state(l: Layout): Promise<unknown> {
  return { tree: await tree(l.root), files: await snapshot(l.root) };
}

/** Refused with exit 5 naming the link, one line, and nothing anywhere changed. */
async function expectRefused(result: CliResult, l: Layout, before: unknown, link: string): Promise<void> {
  expect(result.stderr).toMatch(
    new RegExp(
      `^error: ${link.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')} is a symbolic link \\(to [^)]+\\); pkgreg does not write or delete through links`,
    ),
  );
  expect(result.stderr.split('\n').filter(Boolean)).toHaveLength(1);
  expect(result.code).toBe(5);
  expect(result.stdout).toBe('');
  expect(await state(l)).toEqual(before);
}

describe('install refuses a link on the way to a skill folder, whatever its shape (exit 5)', () => {
  const cases: [string, string[], (l: Layout) => Promise<void>, string][] = [
    [
      'a relative link as an agent folder (.claude -> ../outside)',
      ['--agent', 'claude'],
      (l) => symlink('../outside', join(l.project, '.claude')),
      '.claude',
    ],
    [
      'an absolute link as the shared folder (.agents -> /…/outside)',
      ['--agent', 'universal'],
      (l) => symlink(l.outside, join(l.project, '.agents')),
      '.agents',
    ],
    [
      'a chain of links (.agents -> hop -> ../outside)',
      ['--agent', 'codex'],
      async (l) => {
        await symlink('../outside', join(l.project, 'hop'));
        await symlink('hop', join(l.project, '.agents'));
      },
      '.agents',
    ],
    [
      'a link as the skills folder (.claude/skills -> ../../outside)',
      ['--agent', 'claude'],
      async (l) => {
        await mkdir(join(l.project, '.claude'));
        await symlink('../../outside', join(l.project, '.claude/skills'));
      },
      '.claude/skills',
    ],
    [
      'a link as skills/ (OpenClaw reads it)',
      ['--agent', 'openclaw'],
      (l) => symlink('../outside', join(l.project, 'skills')),
      'skills',
    ],
    [
      'a link as the skill folder itself, even with --force',
      ['--agent', 'universal', '--force'],
      async (l) => {
        await mkdir(join(l.project, '.agents/skills'), { recursive: true });
        await symlink('../../../outside/mine', join(l.project, '.agents/skills/pdf-tools'));
      },
      '.agents/skills/pdf-tools',
    ],
    [
      'a dangling link (.claude -> ../not-yet)',
      ['--agent', 'claude'],
      (l) => symlink('../not-yet', join(l.project, '.claude')),
      '.claude',
    ],
    [
      'a link that stays inside the project (.claude -> elsewhere)',
      ['--agent', 'claude'],
      async (l) => {
        await mkdir(join(l.project, 'elsewhere'));
        await symlink('elsewhere', join(l.project, '.claude'));
      },
      '.claude',
    ],
    [
      'a link under --dir (vendor -> ../outside)',
      ['--dir', 'vendor/skills'],
      (l) => symlink('../outside', join(l.project, 'vendor')),
      'vendor',
    ],
  ];
  for (const [what, args, plant, link] of cases) {
    it(what, async () => {
      const l = await layout();
      await plant(l);
      const before = await state(l);
      await expectRefused(await cli(['install', '@acme/pdf-tools', ...args], l.project), l, before, link);
    });
  }
});

describe('a cloned project: its lockfile and its links (exit 5 before anything is written or deleted)', () => {
  it('install and install --frozen refuse a locked folder under a link (x -> ../outside, x/pdf-tools)', async () => {
    for (const [dirs, link] of [
      [['x/pdf-tools'], 'x'],
      [['.claude/skills/pdf-tools'], '.claude'],
    ] as const) {
      for (const args of [['install'], ['install', '--frozen'], ['install', '--force']]) {
        const l = await layout();
        await writeFile(join(l.project, 'pkgreg-lock.json'), lockWith([...dirs]));
        await symlink('../outside', join(l.project, link));
        const before = await state(l);
        await expectRefused(await cli(args, l.project), l, before, link);
      }
    }
  });

  it('remove and remove --force never delete through a link, modified or intact', async () => {
    const l = await layout();
    await writeFile(join(l.project, 'pkgreg-lock.json'), lockWith(['x/pdf-tools']));
    await symlink('../outside', join(l.project, 'x'));
    // Outside: an intact copy of the locked files (remove would delete it) and one of the user's own.
    const genuine = await tempDir('genuine-copy');
    await writeFile(join(genuine, 'pkgreg-lock.json'), genuineLock);
    expect((await cli(['install'], genuine)).code).toBe(0);
    await cp(join(genuine, '.claude/skills/pdf-tools'), join(l.outside, 'pdf-tools'), {
      recursive: true,
      verbatimSymlinks: true,
    });
    const before = await state(l);
    await expectRefused(await cli(['remove', '@acme/pdf-tools'], l.project), l, before, 'x');
    await writeFile(join(l.outside, 'pdf-tools/SKILL.md'), 'edited by the user\n');
    const edited = await state(l);
    await expectRefused(await cli(['remove', '@acme/pdf-tools', '--force'], l.project), l, edited, 'x');
  });

  it('update refuses to write a new version through a link', async () => {
    const l = await layout();
    expect((await cli(['install', '@acme/moving', '--agent', 'universal'], l.project)).code).toBe(0);
    await updateSkill(database, { ...MOVING, body: 'A second version.' });
    // The installed folder now lives outside, reached through a link the project commits.
    await rename(join(l.project, '.agents'), join(l.outside, 'agents'));
    await symlink('../outside/agents', join(l.project, '.agents'));
    const before = await state(l);
    for (const args of [['update'], ['update', '--force']]) {
      await expectRefused(await cli(args, l.project), l, before, '.agents');
    }
  });

  it('a link inside an installed skill folder is replaced, never followed (install --force, remove --force)', async () => {
    const l = await layout();
    expect((await cli(['install', '@acme/pdf-tools', '--agent', 'universal'], l.project)).code).toBe(0);
    const skill = join(l.project, '.agents/skills/pdf-tools');
    await rename(join(skill, 'references'), join(l.root, 'references-was-here'));
    await symlink('../../../../outside', join(skill, 'references'));
    const outside = await snapshot(l.outside);
    const forced = await cli(['install', '@acme/pdf-tools', '--force'], l.project);
    expect(forced.code).toBe(0);
    expect(await readFile(join(skill, 'references/guide.md'), 'utf8')).toBe('# Guide\n');
    expect(await snapshot(l.outside)).toEqual(outside);
    await rename(join(skill, 'references'), join(l.root, 'references-again'));
    await symlink('../../../../outside', join(skill, 'references'));
    const removed = await cli(['remove', '@acme/pdf-tools', '--force'], l.project);
    expect(removed.code).toBe(0);
    expect(existsSync(skill)).toBe(false);
    expect(await snapshot(l.outside)).toEqual(outside);
  });
});

describe('--global: the roots may be links, nothing below them may', () => {
  it('a link in the home folder (~/.agents -> ../outside) is refused', async () => {
    const l = await layout();
    const userHome = join(l.root, 'home');
    await mkdir(userHome);
    await symlink('../outside', join(userHome, '.agents'));
    const before = await state(l);
    const result = await cli(['install', '@acme/pdf-tools', '--global', '--agent', 'universal'], l.project, {
      home: userHome,
    });
    await expectRefused(result, l, before, '~/.agents');
  });

  it('--dir under a link in the home folder is refused', async () => {
    const l = await layout();
    const userHome = join(l.root, 'home');
    await mkdir(userHome);
    await symlink(l.outside, join(userHome, 'tools'));
    const before = await state(l);
    const result = await cli(
      ['install', '@acme/pdf-tools', '--global', '--dir', join(userHome, 'tools/skills')],
      l.project,
      {
        home: userHome,
      },
    );
    await expectRefused(result, l, before, '~/tools');
  });

  it('a home folder, CLAUDE_CONFIG_DIR or project reached through a link is fine: the user chose it', async () => {
    const l = await layout();
    const realHome = join(l.root, 'real-home');
    const realClaude = join(l.root, 'real-claude');
    await mkdir(realHome);
    await mkdir(realClaude);
    await symlink(realHome, join(l.root, 'home'));
    await symlink(realClaude, join(l.root, 'claude-config'));
    const options = { home: join(l.root, 'home'), env: { CLAUDE_CONFIG_DIR: join(l.root, 'claude-config') } };
    const global = await cli(
      ['install', '@acme/pdf-tools', '--global', '--agent', 'claude,universal'],
      l.project,
      options,
    );
    expect(global.stderr).toBe('');
    expect(global.code).toBe(0);
    expect(existsSync(join(realClaude, 'skills/pdf-tools/SKILL.md'))).toBe(true);
    expect(existsSync(join(realHome, '.agents/skills/pdf-tools/SKILL.md'))).toBe(true);
    const removed = await cli(['remove', '@acme/pdf-tools', '--global'], l.project, options);
    expect(removed.code).toBe(0);
    expect(existsSync(join(realClaude, 'skills/pdf-tools'))).toBe(false);
    expect(existsSync(realClaude)).toBe(true);

    await symlink(l.project, join(l.root, 'project-link'));
    const viaLink = await cli(
      ['install', '@acme/pdf-tools', '--agent', 'claude'],
      join(l.root, 'project-link'),
    );
    expect(viaLink.code).toBe(0);
    expect(existsSync(join(l.project, '.claude/skills/pdf-tools/SKILL.md'))).toBe(true);
  });
});

describe('names a case-insensitive or normalising file system would merge (macOS, Windows)', () => {
  it('an existing sibling that differs only in case or Unicode form is refused (exit 5)', async () => {
    const cases: [string, string[], (l: Layout) => Promise<void>, RegExp][] = [
      [
        '.Claude beside .claude',
        ['--agent', 'claude'],
        (l) => mkdir(join(l.project, '.Claude')),
        /\.claude and \.Claude are the same folder on a case-insensitive file system/,
      ],
      [
        'PDF-Tools beside pdf-tools',
        ['--agent', 'universal'],
        async (l) => {
          await mkdir(join(l.project, '.agents/skills/PDF-Tools'), { recursive: true });
        },
        /\.agents\/skills\/pdf-tools and \.agents\/skills\/PDF-Tools are the same folder/,
      ],
      [
        'café in NFD beside café in NFC (--dir)',
        ['--dir', 'caf\u00e9/skills'],
        (l) => mkdir(join(l.project, 'cafe\u0301')),
        /caf\u00e9 and cafe\u0301 are the same folder/,
      ],
      [
        'SKILLS beside skills (--dir)',
        ['--dir', 'skills'],
        (l) => mkdir(join(l.project, 'SKILLS')),
        /skills and SKILLS are the same folder/,
      ],
    ];
    for (const [what, args, plant, message] of cases) {
      const l = await layout();
      await plant(l);
      const before = await state(l);
      const result = await cli(['install', '@acme/pdf-tools', ...args], l.project);
      expect({ what, code: result.code }).toEqual({ what, code: 5 });
      expect(result.stderr).toMatch(message);
      expect(await state(l)).toEqual(before);
    }
  });

  it('a folder that only case tells from a locked one is refused; so is such a lockfile (exit 1)', async () => {
    const l = await layout();
    expect((await cli(['install', '@acme/pdf-tools', '--agent', 'claude'], l.project)).code).toBe(0);
    const lock = await readFile(join(l.project, 'pkgreg-lock.json'), 'utf8');
    const clash = await cli(['install', '@acme/moving', '--dir', '.CLAUDE/skills'], l.project);
    expect(clash.code).toBe(5);
    expect(clash.stderr).toContain(
      '.claude and .CLAUDE are the same folder on a case-insensitive file system',
    );
    expect(existsSync(join(l.project, '.CLAUDE'))).toBe(false);
    expect(await readFile(join(l.project, 'pkgreg-lock.json'), 'utf8')).toBe(lock);

    const json = JSON.parse(lock);
    const other = JSON.parse(lockWith(['.Claude/skills/pdf-tools'])).packages['@acme/pdf-tools'];
    json.packages['@acme/pdf-twin'] = { ...other, name: '@acme/pdf-twin', dirs: ['.Claude/skills/pdf-twin'] };
    await writeFile(join(l.project, 'pkgreg-lock.json'), JSON.stringify(json));
    for (const args of [['install'], ['remove', '@acme/pdf-tools'], ['list']]) {
      const result = await cli(args, l.project);
      expect(result.code).toBe(1);
      expect(result.stderr).toContain(
        'is not a valid lockfile: packages: .claude and .Claude are the same folder on a case-insensitive file system',
      );
    }
  });

  it('--dir with a drive letter, a colon, a backslash, a trailing dot or space is a usage error (exit 2)', async () => {
    const l = await layout();
    for (const [dir, why] of [
      ['C:/skills', 'a colon'],
      ['skills/C:', 'a colon'],
      ['skills/notes.md:stream', 'a colon'],
      ['skills\\vendor', 'a backslash'],
      ['skills./vendor', 'a name ending in a dot or a space'],
      ['skills /vendor', 'a name ending in a dot or a space'],
      ['skills/.GIT', 'inside a .git folder'],
      ['.', 'the project folder itself'],
    ] as const) {
      const result = await cli(['install', '@acme/pdf-tools', '--dir', dir], l.project);
      expect({ dir, code: result.code }).toEqual({ dir, code: 2 });
      expect(result.stderr).toContain(why);
    }
    expect(await tree(l.project)).toEqual([]);
  });

  it('a lockfile folder with a drive letter, a colon, a trailing dot or space, or a control is refused (exit 1)', async () => {
    for (const dir of [
      'C:/skills/pdf-tools',
      'x/C:/pdf-tools',
      'skills./pdf-tools',
      'skills /pdf-tools',
      'skills\u0007/pdf-tools',
      '.GIT/hooks/pdf-tools',
    ]) {
      const l = await layout();
      await writeFile(join(l.project, 'pkgreg-lock.json'), lockWith([dir]));
      const before = await state(l);
      const result = await cli(['install'], l.project);
      expect({ dir, code: result.code }).toEqual({ dir, code: 1 });
      expect(result.stderr).toContain('unexpected folder');
      expect(await state(l)).toEqual(before);
    }
  });
});
