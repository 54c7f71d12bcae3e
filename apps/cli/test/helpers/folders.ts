import { createHash } from 'node:crypto';
import { lstat, readdir, readFile, readlink } from 'node:fs/promises';
import { join } from 'node:path';

export interface FolderEntry {
  path: string;
  /** `file`, `exec` (executable file) or `link`. */
  kind: 'file' | 'exec' | 'link';
  /** sha256 of the bytes, or the link's target. */
  content: string;
}

/** Every file and link under a folder (not following links, skipping .git), sorted by path. */
export async function snapshot(dir: string): Promise<FolderEntry[]> {
  const entries: FolderEntry[] = [];
  const walk = async (relative: string): Promise<void> => {
    for (const entry of await readdir(join(dir, relative), { withFileTypes: true })) {
      const path = relative ? `${relative}/${entry.name}` : entry.name;
      if (entry.name === '.git') continue;
      const absolute = join(dir, path);
      const stats = await lstat(absolute);
      if (stats.isDirectory()) await walk(path);
      else if (stats.isSymbolicLink())
        entries.push({ path, kind: 'link', content: await readlink(absolute) });
      else {
        const content = createHash('sha256')
          .update(await readFile(absolute))
          .digest('hex');
        entries.push({ path, kind: (stats.mode & 0o111) !== 0 ? 'exec' : 'file', content });
      }
    }
  };
  await walk('');
  return entries.sort((a, b) => (a.path < b.path ? -1 : 1));
}

/** Every path under a folder, folders included, for "nothing was written" checks. */
export async function tree(dir: string): Promise<string[]> {
  const paths: string[] = [];
  const walk = async (relative: string): Promise<void> => {
    let entries: import('node:fs').Dirent[];
    try {
      entries = await readdir(join(dir, relative), { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      const path = relative ? `${relative}/${entry.name}` : entry.name;
      paths.push(entry.isDirectory() ? `${path}/` : path);
      if (entry.isDirectory()) await walk(path);
    }
  };
  await walk('');
  return paths.sort();
}
