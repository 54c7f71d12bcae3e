import { describe, expect, it } from 'vitest';
import { manifestText, normalizeSkillFilePath, resolveSkillLink } from '../src/index.js';

// docs/versions.md: the path, link and manifest rules the indexer and the CLI share.

describe('skill file paths', () => {
  it.each(['SKILL.md', 'scripts/run.sh', 'a/b/c.txt', '.hidden/file', 'références/é.md', 'a b.md'])(
    'accepts %s',
    (path) => {
      expect(normalizeSkillFilePath(path)).toBe(path);
    },
  );
  it.each([
    '',
    '/etc/passwd',
    '../x',
    'a/../b',
    'a//b',
    'a/./b',
    'a\\b',
    'a\0b',
    'a/',
    // Control characters: a line break forged a PAX path= for node-tar; escapes rewrite terminals.
    'é\n17 path=SKILL.md',
    'a\rb',
    'a\tb',
    'a\u001b[2Jb',
    'a\u007fb',
  ])('refuses %j', (path) => {
    expect(normalizeSkillFilePath(path)).toBeNull();
  });
});

describe('links', () => {
  const links = new Map([
    ['d/up', '..'],
    ['ok', 'd/up/d/file.md'],
    ['escape', 'd/up/../SECRET'],
    ['abs', '/etc/passwd'],
    ['loop-a', 'loop-b'],
    ['loop-b', 'loop-a'],
  ]);

  it('follow other links on the way, as the kernel would', () => {
    expect(resolveSkillLink('d/up', links)).toBe('');
    expect(resolveSkillLink('ok', links)).toBe('d/file.md');
  });

  it('leaving the folder, absolute targets and loops resolve to nothing', () => {
    expect(resolveSkillLink('escape', links)).toBeNull();
    expect(resolveSkillLink('abs', links)).toBeNull();
    expect(resolveSkillLink('loop-a', links)).toBeNull();
    expect(resolveSkillLink('not-a-link', links)).toBeNull();
  });
});

describe('manifest text', () => {
  it('one line per file, in code-point order whatever the order given', () => {
    const files = [
      { path: 'b', mode: '100755', sha256: '2'.repeat(64) },
      { path: 'B', mode: '100644', sha256: '1'.repeat(64) },
      { path: 'a', mode: '120000', sha256: '3'.repeat(64) },
    ];
    expect(manifestText(files)).toBe(
      `100644 ${'1'.repeat(64)} B\n120000 ${'3'.repeat(64)} a\n100755 ${'2'.repeat(64)} b\n`,
    );
  });
});
