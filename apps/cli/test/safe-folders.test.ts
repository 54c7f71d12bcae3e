import { existsSync } from 'node:fs';
import { mkdir, readdir, realpath, rename, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CliError, EXIT } from '../src/errors.js';
import { badSegment, foldCollision, foldName, guardFolder } from '../src/safe-folders.js';
import { stageFolder, swapIntoPlace } from '../src/staging.js';
import { tempDir } from './helpers/cli.js';

// The on-disk check behind every write and delete (issue 26), in process on a real file system: what
// it lets through, what it refuses, and that it is run again right before the writes and the swap.

const SKILL = [{ path: 'SKILL.md', mode: '100644' as const, content: Buffer.from('# x\n') }];
const show = (path: string) => path;

function refusal(run: () => unknown): CliError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(CliError);
    expect((error as CliError).exitCode).toBe(EXIT.integrity);
    return error as CliError;
  }
  throw new Error('not refused');
}

describe('guardFolder', () => {
  it('returns the real path under a root that is itself a link, for folders that exist or not yet', async () => {
    const base = await realpath(await tempDir('guard'));
    await mkdir(join(base, 'real/.claude/skills'), { recursive: true });
    await symlink(join(base, 'real'), join(base, 'root'));
    const root = join(base, 'root');
    expect(guardFolder(root, join(root, '.claude/skills/pdf'), show)).toEqual({
      path: join(base, 'real/.claude/skills/pdf'),
      root: join(base, 'real'),
    });
    expect(guardFolder(root, join(root, 'new/deeper/pdf'), show).path).toBe(
      join(base, 'real/new/deeper/pdf'),
    );
    // A root not made yet: its nearest existing folder's real path and the rest.
    expect(guardFolder(join(root, 'missing-root'), join(root, 'missing-root/skills/pdf'), show).path).toBe(
      join(base, 'real/missing-root/skills/pdf'),
    );
  });

  it('refuses a link anywhere below the root, a dangling root link, a file on the way, and what is outside', async () => {
    const base = await realpath(await tempDir('guard'));
    const root = join(base, 'project');
    await mkdir(join(root, 'a/b'), { recursive: true });
    await mkdir(join(base, 'outside'));
    await symlink('../outside', join(root, 'up'));
    await symlink('b', join(root, 'a/inner'));
    await symlink(join(base, 'nowhere'), join(root, 'dangling'));
    await writeFile(join(root, 'file'), 'x');
    await symlink(join(base, 'nowhere'), join(base, 'dangling-root'));
    const cases: [string, string, RegExp][] = [
      [root, join(root, 'up/skills/pdf'), /up is a symbolic link \(to \.\.\/outside\)/],
      [root, join(root, 'a/inner/pdf'), /a\/inner is a symbolic link \(to b\)/],
      [root, join(root, 'dangling/pdf'), /dangling is a symbolic link/],
      [root, join(root, 'a/b/up2'), /a\/b\/up2 is a symbolic link/],
      [root, join(root, 'file/pdf'), /file is a file, not a folder/],
      [root, join(base, 'outside/pdf'), /is outside/],
      [root, root, /is outside/],
      [join(base, 'dangling-root'), join(base, 'dangling-root/skills/pdf'), /does not exist/],
    ];
    await symlink('../../../outside', join(root, 'a/b/up2'));
    for (const [at, dir, message] of cases)
      expect(refusal(() => guardFolder(at, dir, show)).message).toMatch(message);
    // The skill folder itself may be a file (install sees it as modified), never a link.
    expect(guardFolder(root, join(root, 'file'), show).path).toBe(join(root, 'file'));
  });

  it('refuses a sibling with the same folded name, and bad names', async () => {
    const root = await realpath(await tempDir('guard'));
    await mkdir(join(root, '.Claude'));
    await mkdir(join(root, 'cafe\u0301'));
    expect(refusal(() => guardFolder(root, join(root, '.claude/skills/pdf'), show)).message).toMatch(
      /\.claude and .*\.Claude are the same folder/,
    );
    expect(refusal(() => guardFolder(root, join(root, 'caf\u00e9/pdf'), show)).message).toMatch(
      /same folder/,
    );
    for (const name of ['C:', 'x.', 'x ', 'a\\b', '.GIT', 'a\u0007']) {
      expect(refusal(() => guardFolder(root, join(root, name, 'pdf'), show)).message).toContain('has a');
    }
  });

  it('run again after a folder on the way became a link, it refuses: the place changed since the plan', async () => {
    const base = await realpath(await tempDir('guard'));
    const root = join(base, 'project');
    await mkdir(join(root, '.agents/skills'), { recursive: true });
    await mkdir(join(base, 'outside'));
    const target = join(root, '.agents/skills/pdf');
    const planned = guardFolder(root, target, show).path;
    await rename(join(root, '.agents'), join(base, 'moved'));
    await symlink('../outside', join(root, '.agents'));
    expect(refusal(() => guardFolder(root, target, show)).message).toMatch(/\.agents is a symbolic link/);
    expect(planned).toBe(target);
  });
});

describe('staging runs the check before writing and before the swap', () => {
  it('a check failing after the parent folders exist leaves no staging folder', async () => {
    const base = await realpath(await tempDir('stage'));
    const target = join(base, 'skills/pdf');
    const failing = () => {
      throw new CliError(EXIT.integrity, 'moved');
    };
    await expect(stageFolder(target, SKILL, failing)).rejects.toThrow('moved');
    expect(await readdir(join(base, 'skills'))).toEqual([]);
  });

  it('a check failing at the swap moves no folder, not even the ones before it', async () => {
    const base = await realpath(await tempDir('stage'));
    const first = await stageFolder(join(base, 'a/pdf'), SKILL);
    let armed = false;
    const second = await stageFolder(join(base, 'b/pdf'), SKILL, () => {
      if (armed) throw new CliError(EXIT.integrity, 'moved');
    });
    armed = true;
    expect(() => swapIntoPlace([first, second])).toThrow('moved');
    expect(existsSync(join(base, 'a/pdf'))).toBe(false);
    expect(existsSync(join(base, 'b/pdf'))).toBe(false);
    expect(existsSync(first.staging)).toBe(true);
  });
});

describe('folding names', () => {
  it('folds case, Unicode forms and what Windows cuts; finds colliding folders of paths', () => {
    expect(foldName('SKILL.md')).toBe(foldName('skill.md'));
    expect(foldName('caf\u00e9')).toBe(foldName('cafe\u0301'));
    expect(foldName('STRASSE')).toBe(foldName('stra\u00dfe'));
    expect(foldName('\u212a')).toBe(foldName('k'));
    expect(foldName('notes.md. ')).toBe(foldName('notes.md'));
    expect(foldName('a')).not.toBe(foldName('b'));
    expect(foldCollision(['.claude/skills/a', '.agents/skills/b'])).toBeUndefined();
    expect(foldCollision(['.claude/skills/a', '.Claude/skills/b'])).toEqual(['.claude', '.Claude']);
    expect(foldCollision(['x/Skills/a', 'x/skills/b'])).toEqual(['x/Skills', 'x/skills']);
    expect(badSegment('skills')).toBeUndefined();
    expect(badSegment('.claude')).toBeUndefined();
  });
});
