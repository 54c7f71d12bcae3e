import { lstat, readdir, readFile, readlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { ScanFile } from './types.js';

// Skill folders on disk, for the bench and the tests (the indexer hands scanVersion the bytes it read
// from git). The folder rules are docs/versions.md's: a SKILL.md deeper down is a skill of its own and
// its files are cut out; links are kept as links, never followed.

const SKIPPED_DIRS = new Set(['.git', 'node_modules']);

/** Every file of the skill folder at `dir`, nested skill folders left out. */
export async function readSkillFolder(dir: string): Promise<ScanFile[]> {
  const files: ScanFile[] = [];
  const walk = async (abs: string, rel: string) => {
    const entries = await readdir(abs, { withFileTypes: true });
    for (const entry of entries) {
      const path = rel ? `${rel}/${entry.name}` : entry.name;
      const full = join(abs, entry.name);
      if (entry.isDirectory()) {
        if (SKIPPED_DIRS.has(entry.name)) continue;
        const inner = await readdir(full);
        if (inner.includes('SKILL.md')) continue;
        await walk(full, path);
      } else if (entry.isSymbolicLink()) {
        files.push({ path, bytes: new Uint8Array(), linkTarget: await readlink(full) });
      } else if (entry.isFile()) {
        const stat = await lstat(full);
        files.push({ path, bytes: await readFile(full), executable: (stat.mode & 0o111) !== 0 });
      }
    }
  };
  await walk(dir, '');
  return files.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/**
 * The skill folders under `root` (a repository or a folder of skills): every folder holding a
 * SKILL.md, hidden folders and node_modules skipped (installed copies, as the indexer skips them).
 */
export async function findSkillFolders(root: string): Promise<string[]> {
  const found: string[] = [];
  const walk = async (abs: string) => {
    const entries = await readdir(abs, { withFileTypes: true });
    if (entries.some((e) => e.isFile() && e.name === 'SKILL.md')) found.push(abs);
    for (const entry of entries) {
      if (!entry.isDirectory() || entry.name.startsWith('.') || entry.name === 'node_modules') continue;
      await walk(join(abs, entry.name));
    }
  };
  await walk(root);
  return found.sort();
}
