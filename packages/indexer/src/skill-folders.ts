import { posix } from 'node:path';
import { normalizeSkillFilePath } from '@pkgreg/contracts';
import type { TreeFile } from './types.js';

// Which SKILL.md files of a tree are skills, and which files make up each skill's folder
// (docs/versions.md, "The folder").

/** How large a skill may be (configurable per deployment). */
export interface SkillLimits {
  /** Largest file, in bytes. */
  maxFileBytes: number;
  /** All files of a skill together, in bytes. */
  maxSkillBytes: number;
  maxSkillFiles: number;
}

export const DEFAULT_SKILL_LIMITS: SkillLimits = {
  maxFileBytes: 10 * 1024 * 1024,
  maxSkillBytes: 50 * 1024 * 1024,
  maxSkillFiles: 2000,
};

/** A skill's folder in the tree: its directory, its SKILL.md and every file that belongs to it. */
export interface SkillFolder {
  /** Directory from the repository root ('' at the root). */
  dir: string;
  skillMd: TreeFile;
  /** The folder's files, paths relative to it, sorted by path in code-point order. */
  files: Array<TreeFile & { relativePath: string }>;
}

export function dirOf(path: string): string {
  const dir = posix.dirname(path);
  return dir === '' || dir === '.' ? '' : dir;
}

function isSkillMd(path: string): boolean {
  return path === 'SKILL.md' || path.endsWith('/SKILL.md');
}

/** Under a hidden folder (`.claude/`, `.agents/`, any dot-folder) or `node_modules/`: an installed copy. */
export function isInstalledCopy(path: string): boolean {
  const segments = path.split('/').slice(0, -1);
  return segments.some((segment) => segment.startsWith('.') || segment === 'node_modules');
}

const byPath = (a: { path: string }, b: { path: string }) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0);

/**
 * The skill folders of a tree, in path order (code-point order, so "first by path wins" does not depend
 * on the machine). Every SKILL.md, indexed or not, bounds its folder: a nested skill's files, or an
 * installed copy's, are never part of the skill above it.
 */
export function skillFoldersOf(files: TreeFile[], options: { includeHidden: boolean }): SkillFolder[] {
  const skillMds = files.filter((f) => isSkillMd(f.path) && f.mode !== '120000').sort(byPath);
  const folders = new Map<string, SkillFolder>();
  for (const skillMd of skillMds) {
    const dir = dirOf(skillMd.path);
    folders.set(dir, { dir, skillMd, files: [] });
  }
  for (const file of files) {
    let dir = dirOf(file.path);
    for (;;) {
      const folder = folders.get(dir);
      if (folder) {
        folder.files.push({
          ...file,
          relativePath: dir === '' ? file.path : file.path.slice(dir.length + 1),
        });
        break;
      }
      if (dir === '') break;
      dir = dirOf(dir);
    }
  }
  const result: SkillFolder[] = [];
  for (const folder of folders.values()) {
    if (!options.includeHidden && isInstalledCopy(folder.skillMd.path)) continue;
    folder.files.sort((a, b) => byPath({ path: a.relativePath }, { path: b.relativePath }));
    result.push(folder);
  }
  return result.sort((a, b) => byPath(a.skillMd, b.skillMd));
}

function mib(bytes: number): string {
  return `${+(bytes / (1024 * 1024)).toFixed(2)} MiB`;
}

/**
 * Why a folder is past a limit (naming the limit) or holds a path no skill may (a control character, a
 * backslash: normalizeSkillFilePath), or null. Sizes come from the tree listing.
 */
export function limitProblem(folder: SkillFolder, limits: SkillLimits): string | null {
  const unfit = folder.files.find((file) => normalizeSkillFilePath(file.relativePath) === null);
  if (unfit) {
    return `${JSON.stringify(unfit.relativePath)} is not a path a skill may hold (no control characters or backslashes)`;
  }
  if (folder.files.length > limits.maxSkillFiles) {
    return `the skill has ${folder.files.length} files; the limit is ${limits.maxSkillFiles} files a skill`;
  }
  let total = 0;
  for (const file of folder.files) {
    const size = file.size ?? 0;
    if (size > limits.maxFileBytes) {
      return `${file.relativePath} is ${mib(size)}; the limit is ${mib(limits.maxFileBytes)} a file`;
    }
    total += size;
  }
  if (total > limits.maxSkillBytes) {
    return `the skill's files add up to ${mib(total)}; the limit is ${mib(limits.maxSkillBytes)} a skill`;
  }
  return null;
}
