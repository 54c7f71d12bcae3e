import type { VersionFile } from '@pkgreg/contracts';

// A version's manifest is a flat, sorted list of paths; the page shows it as folders and files, and
// resolves relative links (in Markdown, in symlinks) against it.

export interface FolderNode {
  kind: 'folder';
  name: string;
  /** '' for the skill folder itself. */
  path: string;
  /** Folders first, then files, each in code-point order of their names. */
  children: TreeNode[];
  /** Files anywhere below. */
  fileCount: number;
}

export interface FileNode {
  kind: 'file';
  name: string;
  path: string;
  file: VersionFile;
}

export type TreeNode = FolderNode | FileNode;

function byName(a: TreeNode, b: TreeNode): number {
  if (a.kind !== b.kind) return a.kind === 'folder' ? -1 : 1;
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

function sortTree(folder: FolderNode): number {
  folder.children.sort(byName);
  let count = 0;
  for (const child of folder.children) count += child.kind === 'folder' ? sortTree(child) : 1;
  folder.fileCount = count;
  return count;
}

export function buildFileTree(files: readonly VersionFile[]): FolderNode {
  const root: FolderNode = { kind: 'folder', name: '', path: '', children: [], fileCount: 0 };
  const folders = new Map<string, FolderNode>([['', root]]);
  const folderAt = (path: string): FolderNode => {
    const known = folders.get(path);
    if (known) return known;
    const cut = path.lastIndexOf('/');
    const parent = folderAt(cut < 0 ? '' : path.slice(0, cut));
    const folder: FolderNode = {
      kind: 'folder',
      name: path.slice(cut + 1),
      path,
      children: [],
      fileCount: 0,
    };
    parent.children.push(folder);
    folders.set(path, folder);
    return folder;
  };
  for (const file of files) {
    const cut = file.path.lastIndexOf('/');
    folderAt(cut < 0 ? '' : file.path.slice(0, cut)).children.push({
      kind: 'file',
      name: file.path.slice(cut + 1),
      path: file.path,
      file,
    });
  }
  sortTree(root);
  return root;
}

/** The folder holding a path ('' at the top). */
export function dirnameOf(path: string): string {
  const cut = path.lastIndexOf('/');
  return cut < 0 ? '' : path.slice(0, cut);
}

/** Folders that contain `path`, outermost first: `a/b/c.md` -> `a`, `a/b`. */
export function ancestorFolders(path: string): string[] {
  const segments = path.split('/').slice(0, -1);
  return segments.map((_, i) => segments.slice(0, i + 1).join('/'));
}

/**
 * A relative reference (a Markdown link, a symlink target) from inside folder `dir`, as a path in the
 * skill folder; null when it leaves the folder, is absolute, or has a scheme. Query and fragment are
 * dropped, percent-escapes decoded.
 */
export function resolveRelativePath(dir: string, reference: string): string | null {
  if (/^[a-z][a-z0-9+.-]*:/i.test(reference) || reference.startsWith('/')) return null;
  const bare = reference.replace(/[?#].*$/s, '');
  if (bare === '') return null;
  const segments = dir ? dir.split('/') : [];
  for (const raw of bare.split('/')) {
    let segment: string;
    try {
      segment = decodeURIComponent(raw);
    } catch {
      return null;
    }
    if (segment === '' || segment === '.') continue;
    if (segment === '..') {
      if (segments.length === 0) return null;
      segments.pop();
    } else {
      segments.push(segment);
    }
  }
  return segments.length ? segments.join('/') : null;
}
