import { lstat, readdir, readFile, readlink } from 'node:fs/promises';
import { join, posix } from 'node:path';
import {
  manifestText,
  normalizeSkillFilePath,
  resolveSkillLink,
  type VersionDetail,
} from '@pkgreg/contracts';
import { CliError, EXIT } from './errors.js';
import {
  FILE_MODES,
  type FileMode,
  type LockedFile,
  lockedFilesOf,
  pathConflict,
  sha256Hex,
} from './lockfile/lockfile.js';
import { foldCollision, foldPath } from './safe-folders.js';

/** One file of a skill folder, ready to write: a regular file's bytes, or a symbolic link's target. */
export interface SkillFile {
  path: string;
  mode: FileMode;
  /** The bytes; for a symbolic link, its target path. */
  content: Buffer;
}

function integrityError(message: string): CliError {
  return new CliError(EXIT.integrity, message);
}

/** A version's digest over these files: `sha256:` + hex SHA-256 of their manifest text (docs/versions.md). */
export function digestOf(files: Record<string, LockedFile>): string {
  const entries = Object.entries(files).map(([path, file]) => ({
    path,
    mode: file.mode,
    sha256: file.sha256,
  }));
  return `sha256:${sha256Hex(manifestText(entries))}`;
}

/**
 * The shape of a skill folder's files, before anything is written: every path relative and inside the
 * folder, each once, none inside another file or one case-fold apart from another, SKILL.md present,
 * links kept inside. `what` names the list in messages ("the manifest", "the archive").
 */
export function checkFolderShape(
  label: string,
  what: string,
  files: readonly { path: string; linkTarget: string | null }[],
): void {
  const seen = new Set<string>();
  const links = new Map<string, string>();
  for (const file of files) {
    if (normalizeSkillFilePath(file.path) === null) {
      throw integrityError(`${label}: ${what} names "${file.path}", which would escape the skill folder`);
    }
    if (seen.has(file.path)) throw integrityError(`${label}: ${what} names ${file.path} twice`);
    seen.add(file.path);
    if (file.linkTarget !== null) links.set(file.path, file.linkTarget);
  }
  const conflict = pathConflict(seen);
  if (conflict) throw integrityError(`${label}: ${what} puts ${conflict} inside another file`);
  // On a case-insensitive or normalising file system (macOS, Windows) two such names are one file, and
  // a link target's `D/L` is the link `d/l`: refused, and links resolved in that world too.
  const clash = foldCollision(seen);
  if (clash) {
    throw integrityError(
      `${label}: ${what} names ${clash[0]} and ${clash[1]}, the same file on a case-insensitive file system`,
    );
  }
  if (!seen.has('SKILL.md')) throw integrityError(`${label}: ${what} has no SKILL.md`);
  const folded = new Map([...links].map(([path, target]) => [foldPath(path), foldPath(target)]));
  for (const path of links.keys()) {
    if (resolveSkillLink(path, links) === null || resolveSkillLink(foldPath(path), folded) === null) {
      throw integrityError(
        `${label}: the symbolic link ${path} -> ${links.get(path)} would escape the skill folder`,
      );
    }
  }
}

/**
 * Checks a version's manifest before anything is downloaded or written: its shape (checkFolderShape),
 * its file count, the digest matching.
 */
export function checkManifest(label: string, version: VersionDetail): void {
  checkFolderShape(label, 'the manifest', version.files);
  if (version.fileCount !== version.files.length) {
    throw integrityError(
      `${label}: the manifest lists ${version.files.length} files, not ${version.fileCount}`,
    );
  }
  if (digestOf(lockedFilesOf(version)) !== version.digest) {
    throw integrityError(`${label}: the manifest does not match its digest ${version.digest}`);
  }
}

export type FolderState =
  /** Nothing there. */
  | { kind: 'absent' }
  /** Exactly the expected files. */
  | { kind: 'intact' }
  /** Expected files are missing, nothing else differs. */
  | { kind: 'incomplete'; missing: string[] }
  /** A file differs, or one is there that was not installed. */
  | { kind: 'modified'; changed: string[]; missing: string[] };

/** Mode and hash of what is at a path now, without following links; undefined for other kinds. */
async function currentFile(path: string): Promise<LockedFile | undefined> {
  const stats = await lstat(path);
  if (stats.isSymbolicLink()) return { mode: FILE_MODES.symlink, sha256: sha256Hex(await readlink(path)) };
  if (!stats.isFile()) return undefined;
  // Windows keeps no executable bit: every file reads as executable, so the bit is not compared there.
  const executable = process.platform === 'win32' ? undefined : (stats.mode & 0o111) !== 0;
  return {
    mode: executable ? FILE_MODES.executable : FILE_MODES.file,
    sha256: sha256Hex(await readFile(path)),
  };
}

/** Compares a folder on disk with the files a lockfile or manifest expects there. */
export async function inspectFolder(dir: string, expected: Record<string, LockedFile>): Promise<FolderState> {
  let top: Awaited<ReturnType<typeof lstat>>;
  try {
    top = await lstat(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { kind: 'absent' };
    throw error;
  }
  const missing = new Set(Object.keys(expected));
  if (!top.isDirectory()) return { kind: 'modified', changed: ['.'], missing: [...missing] };
  const changed: string[] = [];
  const walk = async (relative: string): Promise<void> => {
    const entries = await readdir(relative ? join(dir, ...relative.split('/')) : dir, {
      withFileTypes: true,
    });
    for (const entry of entries) {
      const path = relative ? `${relative}/${entry.name}` : entry.name;
      if (entry.isDirectory()) {
        await walk(path);
        continue;
      }
      missing.delete(path);
      const want = expected[path];
      const have = await currentFile(join(dir, ...path.split('/')));
      const sameMode =
        want?.mode === have?.mode || (process.platform === 'win32' && want?.mode !== FILE_MODES.symlink);
      if (!want || !have || want.sha256 !== have.sha256 || !sameMode) changed.push(path);
    }
  };
  await walk('');
  const missingList = [...missing].sort();
  if (changed.length) return { kind: 'modified', changed: changed.sort(), missing: missingList };
  if (missingList.length) return { kind: 'incomplete', missing: missingList };
  return { kind: 'intact' };
}

/** The files of a folder holding `expected`, for messages: `dir/path`. */
export function describeChanges(dir: string, state: FolderState): string[] {
  if (state.kind !== 'modified') return [];
  return state.changed.map((path) => (path === '.' ? dir : posix.join(dir, path)));
}
