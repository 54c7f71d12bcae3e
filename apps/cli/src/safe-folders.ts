import { lstatSync, readdirSync, readlinkSync, realpathSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, relative, sep } from 'node:path';
import { CliError, EXIT } from './errors.js';

// Where install, update and remove may write and delete (issue 26). A cloned project is not trusted: it
// may commit a symbolic link (`.claude -> ../../somewhere`) and a lockfile entry under it, and a lexical
// check of the lockfile's folders passes while the writes land wherever the link points. So every
// folder pkgreg writes to or deletes from is walked on disk from its root (the project, or one of the
// user's folders with --global) before anything is written or deleted: each folder on the way, and the
// skill folder itself, must be a real folder or not exist yet (no symbolic link, even a dangling one,
// even one that stays inside), and no sibling may have the same name on a case-insensitive or
// normalising file system (APFS, NTFS). The root itself may be a link: the user chose it.

/** The exit code of a refused folder: like a path escaping the skill folder (README: Exit codes). */
const UNSAFE = EXIT.integrity;

/**
 * A name as a case-insensitive, normalising file system compares it: Unicode NFC/NFD forms alike,
 * case folded (upper then lower case folds ß, ſ and the Kelvin sign too), trailing dots and spaces
 * dropped as Windows drops them.
 */
export function foldName(name: string): string {
  return name
    .normalize('NFD')
    .toUpperCase()
    .toLowerCase()
    .normalize('NFC')
    .replace(/[. ]+$/, '');
}

/** A `/`-separated path with each name folded (`.` and `..` kept). */
export function foldPath(path: string): string {
  return path
    .split('/')
    .map((segment) => (segment === '' || segment === '.' || segment === '..' ? segment : foldName(segment)))
    .join('/');
}

/**
 * The first two paths, or folders on them, that differ as text but are the same folder or file on a
 * case-insensitive file system (`.claude/skills/a` and `.Claude/skills/b`: `.claude` and `.Claude`).
 */
export function foldCollision(paths: Iterable<string>): [string, string] | undefined {
  const seen = new Map<string, string>();
  for (const path of paths) {
    const segments = path.split('/');
    for (let i = 1; i <= segments.length; i++) {
      const prefix = segments.slice(0, i).join('/');
      const key = foldPath(prefix);
      const other = seen.get(key);
      if (other === undefined) seen.set(key, prefix);
      else if (other !== prefix) return [other, prefix];
    }
  }
  return undefined;
}

/**
 * Why a folder name from a lockfile or --dir is refused, or undefined: a name that is not one folder,
 * or means something else on some file system (a Windows drive letter or stream, a name Windows cuts).
 */
export function badSegment(segment: string): string | undefined {
  if (segment === '' || segment === '.' || segment === '..') return 'an empty, "." or ".." folder name';
  if (segment.includes('\\')) return 'a backslash';
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it refuses.
  if (/[\x00-\x1f\x7f]/.test(segment)) return 'a control character';
  if (segment.includes(':')) return 'a colon (a drive letter or a stream on Windows)';
  if (/[. ]$/.test(segment)) return 'a name ending in a dot or a space (Windows drops them)';
  // Never inside git's own folder: a hooks folder there would run whatever was put in it.
  if (foldName(segment) === '.git') return 'a .git folder';
  return undefined;
}

function unsafe(message: string): CliError {
  return new CliError(UNSAFE, message);
}

function codeOf(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException).code;
}

/** The real path of a root; one not made yet is its nearest existing folder's real path plus the rest. */
function realRoot(root: string, name: (path: string) => string): string {
  try {
    return realpathSync.native(root);
  } catch (error) {
    if (codeOf(error) !== 'ENOENT') throw error;
  }
  let stats: ReturnType<typeof lstatSync> | undefined;
  try {
    stats = lstatSync(root);
  } catch {
    // Nothing there: made by the install, under its real parent.
  }
  if (stats?.isSymbolicLink()) {
    throw unsafe(`${name(root)} is a symbolic link to ${readlinkSync(root)}, which does not exist`);
  }
  const parent = dirname(root);
  if (parent === root) return root;
  return join(realRoot(parent, name), basename(root));
}

/** The entry of `dir` other than `segment` with the same folded name; null when `dir` does not exist. */
function foldSibling(dir: string, segment: string): string | undefined | null {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch (error) {
    if (codeOf(error) === 'ENOENT') return null;
    throw error;
  }
  const folded = foldName(segment);
  return names.find((other) => other !== segment && foldName(other) === folded);
}

export interface GuardedFolder {
  /** The folder under the root's real path: what every write and delete uses. */
  path: string;
  /** The root's real path. */
  root: string;
}

/**
 * Checks a folder pkgreg is about to write or delete: `dir` (absolute) must lie inside `root`, every
 * folder from the root down to it and `dir` itself must be a real folder or absent, and no sibling on
 * the way may have the same folded name. `name` says a path in messages. Throws exit 5 otherwise.
 * Synchronous, so it can be run again right before a rename with nothing in between.
 */
export function guardFolder(root: string, dir: string, name: (path: string) => string): GuardedFolder {
  const rel = relative(root, dir);
  if (rel === '' || rel === '..' || rel.startsWith(`..${sep}`) || isAbsolute(rel)) {
    throw unsafe(`${name(dir)} is outside ${name(root)}`);
  }
  const segments = rel.split(sep);
  for (const segment of segments) {
    const why = badSegment(segment);
    if (why) throw unsafe(`${name(dir)} has ${why}`);
  }
  const real = realRoot(root, name);
  let at = real;
  let shown = root;
  for (const [i, segment] of segments.entries()) {
    shown = join(shown, segment);
    const sibling = foldSibling(at, segment);
    // The rest does not exist yet: the install makes real folders there.
    if (sibling === null) return { path: join(at, ...segments.slice(i)), root: real };
    if (sibling !== undefined) {
      throw unsafe(
        `${name(shown)} and ${name(join(dirname(shown), sibling))} are the same folder on a case-insensitive file system; pkgreg does not write or delete where one name could mean the other`,
      );
    }
    const next = join(at, segment);
    let stats: ReturnType<typeof lstatSync>;
    try {
      stats = lstatSync(next);
    } catch (error) {
      if (codeOf(error) !== 'ENOENT') throw error;
      return { path: join(at, ...segments.slice(i)), root: real };
    }
    if (stats.isSymbolicLink()) {
      throw unsafe(
        `${name(shown)} is a symbolic link (to ${readlinkSync(next)}); pkgreg does not write or delete through links: make it a real folder, or install elsewhere (--agent, --dir)`,
      );
    }
    if (!stats.isDirectory() && i < segments.length - 1) {
      throw unsafe(`${name(shown)} is a file, not a folder`);
    }
    at = next;
  }
  // What the kernel resolves the folder to must be where the walk arrived.
  const resolved = realpathSync.native(at);
  if (resolved !== at) throw unsafe(`${name(dir)} resolves to ${resolved}, not to itself`);
  return { path: at, root: real };
}
