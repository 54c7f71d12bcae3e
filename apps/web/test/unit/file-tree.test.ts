import type { VersionFile } from '@pkgreg/contracts';
import { describe, expect, it } from 'vitest';
import {
  ancestorFolders,
  buildFileTree,
  dirnameOf,
  type FolderNode,
  resolveRelativePath,
  type TreeNode,
} from '../../src/file-tree.js';

function file(path: string, extra: Partial<VersionFile> = {}): VersionFile {
  return {
    path,
    size: 10,
    sha256: '0'.repeat(64),
    gitBlobSha: '0'.repeat(40),
    executable: false,
    linkTarget: null,
    ...extra,
  };
}

/** The tree as indented lines: folders end with `/` and their file count. */
function outline(node: TreeNode, depth = 0): string[] {
  const pad = '  '.repeat(depth);
  if (node.kind === 'file') return [`${pad}${node.name}`];
  const self = node.path === '' ? [] : [`${pad}${node.name}/ (${node.fileCount})`];
  return [...self, ...node.children.flatMap((c) => outline(c, node.path === '' ? depth : depth + 1))];
}

describe('buildFileTree', () => {
  it('nests a manifest into folders, folders first, names in code-point order, with file counts', () => {
    const root = buildFileTree(
      [
        'SKILL.md',
        'assets/logo.png',
        'guide.md',
        'references/deep/b.md',
        'references/a.md',
        'scripts/run.sh',
        'LICENSE',
        'references/deep/a.md',
      ].map((p) => file(p)),
    );
    expect(root.fileCount).toBe(8);
    expect(outline(root)).toEqual([
      'assets/ (1)',
      '  logo.png',
      'references/ (3)',
      '  deep/ (2)',
      '    a.md',
      '    b.md',
      '  a.md',
      'scripts/ (1)',
      '  run.sh',
      'LICENSE',
      'SKILL.md',
      'guide.md',
    ]);
    const references = root.children.find((c) => c.name === 'references') as FolderNode;
    expect(references.path).toBe('references');
    expect((references.children[0] as FolderNode).path).toBe('references/deep');
  });

  it('keeps each file record (mode and link) on its node', () => {
    const root = buildFileTree([
      file('run.sh', { executable: true }),
      file('l.md', { linkTarget: 'run.sh' }),
    ]);
    expect(
      root.children.map((c) => c.kind === 'file' && [c.path, c.file.executable, c.file.linkTarget]),
    ).toEqual([
      ['l.md', false, 'run.sh'],
      ['run.sh', true, null],
    ]);
  });

  it('is empty for an empty manifest', () => {
    expect(buildFileTree([])).toEqual({ kind: 'folder', name: '', path: '', children: [], fileCount: 0 });
  });
});

describe('paths', () => {
  it('names folders and ancestors', () => {
    expect(dirnameOf('a/b/c.md')).toBe('a/b');
    expect(dirnameOf('c.md')).toBe('');
    expect(ancestorFolders('a/b/c.md')).toEqual(['a', 'a/b']);
    expect(ancestorFolders('c.md')).toEqual([]);
  });

  it('resolves relative references inside the folder, and refuses those that leave it', () => {
    expect(resolveRelativePath('', 'references/guide.md')).toBe('references/guide.md');
    expect(resolveRelativePath('references', '../scripts/run.sh')).toBe('scripts/run.sh');
    expect(resolveRelativePath('references', './a.md#part')).toBe('references/a.md');
    expect(resolveRelativePath('', 'my%20file.md?raw=1')).toBe('my file.md');
    expect(resolveRelativePath('a/b', '../../c')).toBe('c');
    expect(resolveRelativePath('a', '../../c')).toBeNull();
    expect(resolveRelativePath('', '../sibling/SKILL.md')).toBeNull();
    expect(resolveRelativePath('', '/abs.md')).toBeNull();
    expect(resolveRelativePath('', 'https://example.com/a.md')).toBeNull();
    expect(resolveRelativePath('', 'mailto:a@b.c')).toBeNull();
    expect(resolveRelativePath('', '#top')).toBeNull();
    expect(resolveRelativePath('', '%E0%A4%A')).toBeNull();
    expect(resolveRelativePath('a', '..')).toBeNull();
  });
});
