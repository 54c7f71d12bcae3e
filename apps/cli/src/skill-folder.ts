import { lstatSync, readdirSync, readFileSync } from 'node:fs';
import { basename, join, relative, sep } from 'node:path';
import { buildArchive, type ManifestFile } from '@pkgreg/registry/archive';
import semver from 'semver';
import { CliError, EXIT, usageError } from './errors.js';
import { frontmatterFields } from './frontmatter.js';

// `pkgreg publish <folder>` (docs/publishing.md, "Uploading"): the skills a folder holds and each one
// packed as the registry packs its own archives (entries under `<name>/`, sorted, fixed mtime and
// owner), so the bytes depend only on the files. The registry checks everything again (the SKILL.md
// rules, sizes, paths); this reads only what the upload's address needs: the name and the version.

/** Folders never packed: git's own, and installed dependencies. */
const SKIPPED = new Set(['.git', 'node_modules']);

export interface LocalSkill {
  /** The folder, as given or found. */
  dir: string;
  name: string;
  /** The SKILL.md's declared version (`metadata.version`, else `version`), normalised; else null. */
  declaredVersion: string | null;
  files: Array<{ path: string; executable: boolean; bytes: Buffer }>;
}

/** As the indexer reads a declared version: exact semver, or `1.2`/`v1` widened; anything else null. */
export function normalizeVersion(text: string | undefined): string | null {
  if (!text) return null;
  const exact = semver.valid(text);
  if (exact) return exact;
  if (/^v?\d+(\.\d+){0,2}$/.test(text)) return semver.coerce(text)?.version ?? null;
  return null;
}

function isSkillFolder(dir: string): boolean {
  try {
    return lstatSync(join(dir, 'SKILL.md')).isFile();
  } catch {
    return false;
  }
}

/** Every file under `dir` (relative, `/`-separated), leaving out nested skills' folders. */
function filesOf(dir: string, shown: (path: string) => string): LocalSkill['files'] {
  const files: LocalSkill['files'] = [];
  const walk = (at: string) => {
    for (const entry of readdirSync(at, { withFileTypes: true })) {
      const full = join(at, entry.name);
      const path = relative(dir, full).split(sep).join('/');
      if (entry.isDirectory()) {
        if (SKIPPED.has(entry.name) || isSkillFolder(full)) continue;
        walk(full);
      } else if (entry.isFile()) {
        const mode = lstatSync(full).mode;
        files.push({ path, executable: (mode & 0o111) !== 0, bytes: readFileSync(full) });
      } else {
        const what = entry.isSymbolicLink() ? 'a symbolic link' : 'not a regular file';
        throw new CliError(
          EXIT.error,
          `${shown(full)} is ${what}; an upload holds regular files only (copy the file in its place)`,
        );
      }
    }
  };
  walk(dir);
  return files.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/** The skill folders of `root`: itself when it holds a SKILL.md, else each folder below that does. */
export function findSkillFolders(root: string): string[] {
  if (isSkillFolder(root)) return [root];
  const found: string[] = [];
  const walk = (at: string) => {
    for (const entry of readdirSync(at, { withFileTypes: true })) {
      // Hidden folders and node_modules hold installed copies, as the indexer skips them.
      if (!entry.isDirectory() || entry.name.startsWith('.') || entry.name === 'node_modules') continue;
      const full = join(at, entry.name);
      if (isSkillFolder(full)) found.push(full);
      else walk(full);
    }
  };
  walk(root);
  return found.sort();
}

export function readSkill(dir: string, shown: (path: string) => string): LocalSkill {
  const files = filesOf(dir, shown);
  const skillMd = files.find((f) => f.path === 'SKILL.md');
  if (!skillMd) throw usageError(`${shown(dir)} has no SKILL.md`);
  const fields = frontmatterFields(skillMd.bytes.toString('utf8'));
  const name = fields.name || basename(dir);
  return {
    dir,
    name,
    declaredVersion: normalizeVersion(fields.metadataVersion ?? fields.version),
    files,
  };
}

/** The skill as a tar.gz in the registry's archive format: the same files give the same bytes. */
export async function packSkill(skill: LocalSkill): Promise<Buffer> {
  const bytes = new Map(skill.files.map((f) => [f.path, f.bytes]));
  const manifest: ManifestFile[] = skill.files.map((f) => ({
    path: f.path,
    mode: f.executable ? '100755' : '100644',
    sha256: '',
    gitSha1: '',
    size: f.bytes.length,
    linkTarget: null,
  }));
  return buildArchive(skill.name, manifest, (f) => bytes.get(f.path) as Buffer);
}
