import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { buildArchive, type ManifestFile, readSkillArchive, tarBound } from '../src/index.js';

// An upload's archive read back (docs/publishing.md, "Uploading"): what buildArchive makes passes
// whole; a gzip bomb stops at the bound of the limits; sizes and counts are refused before reading on.

const LIMITS = { maxFileBytes: 1000, maxSkillBytes: 1500, maxSkillFiles: 3 };

function file(path: string, mode: ManifestFile['mode'] = '100644'): ManifestFile {
  return { path, mode, sha256: '', gitSha1: '', size: 0, linkTarget: null };
}

async function archiveOf(name: string, files: Record<string, string | Buffer>, executable: string[] = []) {
  const manifest = Object.keys(files).map((path) =>
    file(path, executable.includes(path) ? '100755' : '100644'),
  );
  return buildArchive(name, manifest, (f) => Buffer.from(files[f.path] as string | Buffer));
}

describe('readSkillArchive', () => {
  it("reads the registry's own archive form back: every file, its bytes, its executable bit", async () => {
    const tgz = await archiveOf('kit', { 'SKILL.md': '---\nname: kit\n---\n', 'bin/run': 'echo\n' }, [
      'bin/run',
    ]);
    expect(await readSkillArchive(tgz, 'kit', LIMITS)).toEqual({
      ok: true,
      files: [
        { path: 'SKILL.md', executable: false, bytes: Buffer.from('---\nname: kit\n---\n') },
        { path: 'bin/run', executable: true, bytes: Buffer.from('echo\n') },
      ],
    });
  });

  it('a gzip bomb stops at the bound of the limits (too_large), never unpacked whole', async () => {
    const bomb = gzipSync(Buffer.alloc(tarBound(LIMITS.maxSkillBytes, LIMITS.maxSkillFiles) + 1));
    expect(bomb.length).toBeLessThan(20_000);
    const read = await readSkillArchive(bomb, 'kit', LIMITS);
    expect(read).toMatchObject({
      ok: false,
      problem: 'too_large',
      reason: expect.stringMatching(/unpacks to more than/),
    });
  });

  it('too many files, a file too big, too many bytes in all: too_large naming the limit', async () => {
    const many = await archiveOf('kit', { 'SKILL.md': 'x', a: 'a', b: 'b', c: 'c' });
    expect(await readSkillArchive(many, 'kit', LIMITS)).toMatchObject({
      problem: 'too_large',
      reason: expect.stringMatching(/more than 3 files/),
    });
    const big = await archiveOf('kit', { 'SKILL.md': 'x', big: Buffer.alloc(1001) });
    expect(await readSkillArchive(big, 'kit', LIMITS)).toMatchObject({
      problem: 'too_large',
      reason: expect.stringMatching(/^big is/),
    });
    const total = await archiveOf('kit', { 'SKILL.md': 'x', a: Buffer.alloc(800), b: Buffer.alloc(800) });
    expect(await readSkillArchive(total, 'kit', LIMITS)).toMatchObject({
      problem: 'too_large',
      reason: expect.stringMatching(/add up to more than/),
    });
  });
});
