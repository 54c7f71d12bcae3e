import { existsSync } from 'node:fs';
import { chmod, lstat, mkdir, readdir, readFile, readlink, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { resolveSkillLink } from '@pkgreg/contracts';
import { describe, expect, it } from 'vitest';
import { unpackArchive } from '../src/archive.js';
import { CliError } from '../src/errors.js';
import { lockedFilesOf } from '../src/lockfile/lockfile.js';
import { checkManifest, inspectFolder } from '../src/skill-files.js';
import { stageFolder, swapIntoPlace } from '../src/staging.js';
import {
  entriesOf,
  type FixtureFile,
  fixtureVersion,
  integrityOf,
  manifestOf,
  tgz,
} from './helpers/archive.js';
import { tempDir } from './helpers/cli.js';

// The archive checks and the staged swap, on archives built here (good ones and deliberately bad ones).

const FILES: FixtureFile[] = [
  { path: 'SKILL.md', content: '---\nname: pdf\n---\n# PDF\n' },
  { path: 'scripts/extract.sh', content: '#!/bin/sh\necho extract\n', executable: true },
  { path: 'references/guide.md', content: '# Guide\n' },
  { path: 'assets/logo.png', content: Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 1, 2, 255, 254]) },
  { path: 'latest.md', linkTarget: 'references/guide.md' },
];

async function failure(promise: Promise<unknown>): Promise<CliError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(CliError);
  return error as CliError;
}

describe('unpackArchive: every entry checked against the manifest before anything is written', () => {
  it('accepts a well-formed archive: bytes, executable bits and links as the manifest says', async () => {
    const { archive, manifest } = await fixtureVersion('pdf', '1.0.0', FILES);
    checkManifest('@acme/pdf@1.0.0', manifest);
    const files = await unpackArchive('@acme/pdf@1.0.0', 'pdf', manifest, archive);
    expect(files.map((f) => [f.path, f.mode])).toEqual([
      ['SKILL.md', '100644'],
      ['assets/logo.png', '100644'],
      ['latest.md', '120000'],
      ['references/guide.md', '100644'],
      ['scripts/extract.sh', '100755'],
    ]);
    expect(files.find((f) => f.path === 'assets/logo.png')?.content).toEqual(FILES[3]?.content);
    expect(files.find((f) => f.path === 'latest.md')?.content.toString()).toBe('references/guide.md');
  });

  it('refuses an archive whose bytes do not match its integrity (exit 5)', async () => {
    const { archive, manifest } = await fixtureVersion('pdf', '1.0.0', FILES);
    const tampered = Buffer.from(archive);
    tampered[tampered.length - 10] = (tampered[tampered.length - 10] ?? 0) ^ 1;
    const error = await failure(unpackArchive('@acme/pdf@1.0.0', 'pdf', manifest, tampered));
    expect(error.exitCode).toBe(5);
    expect(error.message).toMatch(/^Integrity mismatch: the archive of @acme\/pdf@1\.0\.0/);
  });

  const bad: [
    string,
    (files: FixtureFile[]) => Promise<{ archive: Buffer; manifest: ReturnType<typeof manifestOf> }>,
    RegExp,
  ][] = [
    [
      'a file whose bytes differ from the manifest',
      async (files) => {
        const archive = await tgz(
          entriesOf(
            'pdf',
            files.map((f) => (f.path === 'SKILL.md' ? { ...f, content: 'evil' } : f)),
          ),
        );
        return { archive, manifest: manifestOf('pdf', '1.0.0', files, archive) };
      },
      /SKILL\.md in the archive differs from the manifest/,
    ],
    [
      'a lost executable bit',
      async (files) => {
        const archive = await tgz(
          entriesOf(
            'pdf',
            files.map((f) => ({ ...f, executable: false })),
          ),
        );
        return { archive, manifest: manifestOf('pdf', '1.0.0', files, archive) };
      },
      /scripts\/extract\.sh in the archive has the wrong executable bit/,
    ],
    [
      'an entry the manifest does not list',
      async (files) => {
        const archive = await tgz(entriesOf('pdf', [...files, { path: 'extra.sh', content: 'rm -rf ~' }]));
        return { archive, manifest: manifestOf('pdf', '1.0.0', files, archive) };
      },
      /the archive holds extra\.sh, which is not in the manifest/,
    ],
    [
      'a file of the manifest left out',
      async (files) => {
        const archive = await tgz(
          entriesOf(
            'pdf',
            files.filter((f) => f.path !== 'references/guide.md'),
          ),
        );
        return { archive, manifest: manifestOf('pdf', '1.0.0', files, archive) };
      },
      /the archive lacks references\/guide\.md/,
    ],
    [
      'a path climbing out with ..',
      async (files) => {
        const archive = await tgz([
          ...entriesOf('pdf', files),
          { name: 'pdf/../../escape.sh', type: 'file', content: Buffer.from('x') },
        ]);
        return { archive, manifest: manifestOf('pdf', '1.0.0', files, archive) };
      },
      /"pdf\/\.\.\/\.\.\/escape\.sh", which would escape the skill folder/,
    ],
    [
      'an absolute path',
      async (files) => {
        const archive = await tgz([
          { name: '/etc/cron.d/evil', type: 'file', content: Buffer.from('x') },
          ...entriesOf('pdf', files),
        ]);
        return { archive, manifest: manifestOf('pdf', '1.0.0', files, archive) };
      },
      /"\/etc\/cron\.d\/evil", which would escape the skill folder/,
    ],
    [
      'an entry outside the <name>/ prefix',
      async (files) => {
        const archive = await tgz([
          ...entriesOf('pdf', files),
          { name: 'other/SKILL.md', type: 'file', content: Buffer.from('x') },
        ]);
        return { archive, manifest: manifestOf('pdf', '1.0.0', files, archive) };
      },
      /"other\/SKILL\.md", which would escape/,
    ],
    [
      'a directory entry',
      async (files) => {
        const listed = [...files, { path: 'emptydir', content: '' }];
        const archive = await tgz([
          ...entriesOf('pdf', files),
          { name: 'pdf/emptydir', type: 'directory', mode: 0o755 },
        ]);
        return { archive, manifest: manifestOf('pdf', '1.0.0', listed, archive) };
      },
      /emptydir as a directory; only files and links are installed/,
    ],
    [
      'a hard link in place of a file',
      async (files) => {
        const entries = entriesOf('pdf', files).map((e) =>
          e.name === 'pdf/references/guide.md'
            ? { name: e.name, type: 'link' as const, linkname: 'pdf/SKILL.md' }
            : e,
        );
        const archive = await tgz(entries);
        return { archive, manifest: manifestOf('pdf', '1.0.0', files, archive) };
      },
      /references\/guide\.md as a link; only files and links are installed/,
    ],
    [
      'a link whose target differs from the manifest',
      async (files) => {
        const entries = entriesOf('pdf', files).map((e) =>
          e.name === 'pdf/latest.md' ? { ...e, linkname: '../../../etc/passwd' } : e,
        );
        const archive = await tgz(entries);
        return { archive, manifest: manifestOf('pdf', '1.0.0', files, archive) };
      },
      /latest\.md in the archive is a link to \.\.\/\.\.\/\.\.\/etc\/passwd, not what the manifest says/,
    ],
    [
      'the same path twice',
      async (files) => {
        const entries = entriesOf('pdf', files);
        const archive = await tgz([...entries, entries[0] as (typeof entries)[number]]);
        return { archive, manifest: manifestOf('pdf', '1.0.0', files, archive) };
      },
      /the archive holds SKILL\.md twice/,
    ],
  ];
  for (const [what, build, message] of bad) {
    it(`refuses ${what} (exit 5)`, async () => {
      const { archive, manifest } = await build(FILES);
      const error = await failure(
        (async () => {
          checkManifest('@acme/pdf@1.0.0', manifest);
          return unpackArchive('@acme/pdf@1.0.0', 'pdf', manifest, archive);
        })(),
      );
      expect(error.exitCode).toBe(5);
      expect(error.message).toMatch(message);
    });
  }

  it('refuses a gzip bomb: the unpacked tar may not outgrow the manifest', async () => {
    const big: FixtureFile[] = [{ path: 'SKILL.md', content: 'x' }];
    const archive = await tgz([
      ...entriesOf('pdf', big),
      { name: 'pdf/zeros', type: 'file', content: Buffer.alloc(8 * 1024 * 1024) },
    ]);
    const manifest = { ...manifestOf('pdf', '1.0.0', big, archive), integrity: integrityOf(archive) };
    const error = await failure(unpackArchive('@acme/pdf@1.0.0', 'pdf', manifest, archive));
    expect(error.exitCode).toBe(5);
    expect(error.message).toMatch(/cannot be unpacked/);
  });
});

describe('checkManifest: refused before any download', () => {
  it('links that leave the folder, directly or through another link', async () => {
    const cases: [FixtureFile[], RegExp][] = [
      [
        [
          { path: 'SKILL.md', content: 'x' },
          { path: 'up', linkTarget: '../outside' },
        ],
        /up -> \.\.\/outside would escape/,
      ],
      [
        [
          { path: 'SKILL.md', content: 'x' },
          { path: 'abs', linkTarget: '/etc/passwd' },
        ],
        /abs -> \/etc\/passwd would escape/,
      ],
      [
        [
          { path: 'SKILL.md', content: 'x' },
          { path: 'd/l', linkTarget: '..' },
          { path: 'm', linkTarget: 'd/l/../secret' },
        ],
        /m -> d\/l\/\.\.\/secret would escape/,
      ],
      [
        [
          { path: 'SKILL.md', content: 'x' },
          { path: 'loop', linkTarget: 'loop' },
        ],
        /loop -> loop would escape/,
      ],
    ];
    for (const [files, message] of cases) {
      const { manifest } = await fixtureVersion('pdf', '1.0.0', files);
      expect(() => checkManifest('@acme/pdf@1.0.0', manifest)).toThrow(message);
    }
  });

  it('names one case-insensitive or normalising file system merges, and links escaping there (issue 26)', async () => {
    const cases: [FixtureFile[], RegExp][] = [
      [
        [
          { path: 'SKILL.md', content: 'x' },
          { path: 'skill.md', content: 'y' },
        ],
        /the manifest names SKILL\.md and skill\.md, the same file on a case-insensitive file system/,
      ],
      [
        [
          { path: 'SKILL.md', content: 'x' },
          { path: 'Docs/a.md', content: 'a' },
          { path: 'docs/b.md', content: 'b' },
        ],
        /names Docs and docs, the same file/,
      ],
      [
        [
          { path: 'SKILL.md', content: 'x' },
          { path: 'caf\u00e9.md', content: 'nfc' },
          { path: 'cafe\u0301.md', content: 'nfd' },
        ],
        /names cafe\u0301\.md and caf\u00e9\.md, the same file/,
      ],
      [
        [
          { path: 'SKILL.md', content: 'x' },
          { path: 'stra\u00dfe.md', content: 'sharp s' },
          { path: 'STRASSE.md', content: 'upper' },
        ],
        /names STRASSE\.md and stra\u00dfe\.md, the same file/,
      ],
      [
        [
          { path: 'SKILL.md', content: 'x' },
          { path: 'notes.md', content: 'a' },
          { path: 'notes.md.', content: 'b' },
        ],
        /names notes\.md and notes\.md\., the same file/,
      ],
      [
        // Case-sensitive, D/L is no link and m stays inside; where D/L is d/l, m leaves the folder.
        [
          { path: 'SKILL.md', content: 'x' },
          { path: 'd/l', linkTarget: '..' },
          { path: 'm', linkTarget: 'D/L/..' },
        ],
        /the symbolic link m -> D\/L\/\.\. would escape the skill folder/,
      ],
    ];
    for (const [files, message] of cases) {
      const { manifest } = await fixtureVersion('pdf', '1.0.0', files);
      expect(() => checkManifest('@acme/pdf@1.0.0', manifest)).toThrow(message);
    }
    // The same names without a twin are fine.
    const { manifest } = await fixtureVersion('pdf', '1.0.0', [
      { path: 'SKILL.md', content: 'x' },
      { path: 'Docs/a.md', content: 'a' },
      { path: 'caf\u00e9.md', content: 'nfc' },
      { path: 'd/l', linkTarget: '..' },
      { path: 'm', linkTarget: 'd/l/Docs' },
    ]);
    expect(() => checkManifest('@acme/pdf@1.0.0', manifest)).not.toThrow();
  });

  it('escaping paths, a missing SKILL.md and a digest that does not match the files', async () => {
    const { manifest } = await fixtureVersion('pdf', '1.0.0', FILES);
    const withPath = (path: string) => ({
      ...manifest,
      files: manifest.files.map((f, i) => (i === 1 ? { ...f, path } : f)),
    });
    expect(() => checkManifest('x', withPath('../x'))).toThrow(/"\.\.\/x", which would escape/);
    expect(() => checkManifest('x', withPath('/abs'))).toThrow(/would escape/);
    expect(() => checkManifest('x', withPath('a\\..\\b'))).toThrow(/would escape/);
    const noSkill = { ...manifest, files: manifest.files.filter((f) => f.path !== 'SKILL.md') };
    expect(() => checkManifest('x', { ...noSkill, fileCount: noSkill.files.length })).toThrow(/no SKILL\.md/);
    const swapped = {
      ...manifest,
      files: manifest.files.map((f) =>
        f.path === 'references/guide.md' ? { ...f, sha256: 'a'.repeat(64) } : f,
      ),
    };
    expect(() => checkManifest('x', swapped)).toThrow(/does not match its digest/);
  });

  it('resolveSkillLink follows links inside the folder and stops at the top', () => {
    const links = new Map([
      ['a/b', '../c'],
      ['c', 'd/e'],
      ['x', '../y'],
    ]);
    expect(resolveSkillLink('a/b', links)).toBe('d/e');
    expect(resolveSkillLink('x', links)).toBeNull();
  });
});

describe('staging and swap: the old folder stays intact until the new one is complete', () => {
  it('writes bytes, executable bits and links; the swap replaces the old folder whole', async () => {
    const root = await tempDir('stage');
    const target = join(root, '.agents/skills/pdf');
    await mkdir(target, { recursive: true });
    await writeFile(join(target, 'SKILL.md'), 'old\n');
    await writeFile(join(target, 'stale.txt'), 'from the old version\n');
    const { archive, manifest } = await fixtureVersion('pdf', '1.0.0', FILES);
    const files = await unpackArchive('l', 'pdf', manifest, archive);
    const staged = await stageFolder(target, files);
    // Before the swap, the old folder is untouched.
    expect(await readFile(join(target, 'SKILL.md'), 'utf8')).toBe('old\n');
    const old = swapIntoPlace([staged]);
    expect(old).toHaveLength(1);
    expect(await readFile(join(target, 'SKILL.md'), 'utf8')).toBe(FILES[0]?.content);
    expect(existsSync(join(target, 'stale.txt'))).toBe(false);
    expect((await stat(join(target, 'scripts/extract.sh'))).mode & 0o777).toBe(0o755);
    expect((await stat(join(target, 'references/guide.md'))).mode & 0o777).toBe(0o644);
    expect((await lstat(join(target, 'latest.md'))).isSymbolicLink()).toBe(true);
    expect(await readlink(join(target, 'latest.md'))).toBe('references/guide.md');
    expect(await inspectFolder(target, lockedFilesOf(manifest))).toEqual({ kind: 'intact' });
  });

  it('a swap that fails midway puts every folder back as it was', async () => {
    const root = await tempDir('swap-fail');
    const first = join(root, 'a/pdf');
    const second = join(root, 'b/pdf');
    await mkdir(first, { recursive: true });
    await writeFile(join(first, 'SKILL.md'), 'old a\n');
    const { archive, manifest } = await fixtureVersion('pdf', '1.0.0', FILES);
    const files = await unpackArchive('l', 'pdf', manifest, archive);
    const stagedA = await stageFolder(first, files);
    const stagedB = await stageFolder(second, files);
    // The second rename cannot happen: its staging folder is gone.
    const { rm } = await import('node:fs/promises');
    await rm(stagedB.staging, { recursive: true });
    expect(() => swapIntoPlace([stagedA, stagedB])).toThrow();
    expect(await readFile(join(first, 'SKILL.md'), 'utf8')).toBe('old a\n');
    expect(await readdir(join(root, 'a'))).toEqual(expect.arrayContaining(['pdf']));
    expect(existsSync(second)).toBe(false);
  });

  it('inspectFolder tells intact, incomplete and modified apart (added, changed, chmod)', async () => {
    const root = await tempDir('inspect');
    const target = join(root, 'pdf');
    const { archive, manifest } = await fixtureVersion('pdf', '1.0.0', FILES);
    const expected = lockedFilesOf(manifest);
    expect(await inspectFolder(target, expected)).toEqual({ kind: 'absent' });
    swapIntoPlace([await stageFolder(target, await unpackArchive('l', 'pdf', manifest, archive))]);
    const { rm } = await import('node:fs/promises');
    await rm(join(target, 'references/guide.md'));
    expect(await inspectFolder(target, expected)).toEqual({
      kind: 'incomplete',
      missing: ['references/guide.md'],
    });
    await writeFile(join(target, 'notes.txt'), 'mine');
    await chmod(join(target, 'scripts/extract.sh'), 0o644);
    expect(await inspectFolder(target, expected)).toEqual({
      kind: 'modified',
      changed: ['notes.txt', 'scripts/extract.sh'],
      missing: ['references/guide.md'],
    });
  });
});
