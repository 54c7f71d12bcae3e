import { readFile } from 'node:fs/promises';
import { AGENT_SKILL_NAME_PATTERN } from '@pkgreg/contracts';
import type { Context } from '../context.js';
import { CliError, EXIT, usageError } from '../errors.js';
import type { InstallTarget } from '../install/targets.js';
import type { Progress } from '../progress.js';
import {
  byCodePoint,
  emptyLockfile,
  invalidLockfile,
  isDirect,
  LOCKFILE_NAME,
  LOCKFILE_VERSION,
  type LockedFile,
  type Lockfile,
  lockfileSchema,
  type SiteEntry,
  serializeLockfile,
  siteEntries,
  siteLabel,
  writeLockfileText,
} from './lockfile.js';
import {
  frozenV1Error,
  installedV1,
  type LockfileV1,
  LockfileV1Schema,
  serializeV1,
  upgradeV1,
  type V1Entry,
} from './v1.js';

// Reading pkgreg-lock.json. A command that changes installs reads it with `readLock`: version 2, or a
// version 1 file upgraded here, once, against the registry (v1.ts). `list` and `remove` read either
// version as it is, without the registry (`readInstalled`).

export type ReadLockfile = { version: 2; lock: Lockfile } | { version: 1; lock: LockfileV1 };

/** Parses lockfile text: version 2, or version 1 to be upgraded. Throws exit 1 on anything else. */
export function parseLockfile(text: string, path: string, global: boolean): ReadLockfile {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new CliError(EXIT.error, `${path} is not valid JSON`);
  }
  const version = (json as { lockfileVersion?: unknown } | null)?.lockfileVersion;
  if (version === 1) {
    const parsed = LockfileV1Schema.safeParse(json);
    if (!parsed.success) throw invalidLockfile(path, parsed.error);
    return { version: 1, lock: parsed.data };
  }
  if (typeof version === 'number' && version > LOCKFILE_VERSION) {
    throw new CliError(
      EXIT.error,
      `${path} has lockfileVersion ${version}, newer than this pkgreg understands (${LOCKFILE_VERSION}); upgrade pkgreg`,
    );
  }
  const parsed = lockfileSchema(global).safeParse(json);
  if (!parsed.success) throw invalidLockfile(path, parsed.error);
  return { version: 2, lock: parsed.data as Lockfile };
}

export async function readLockfile(path: string, global: boolean): Promise<ReadLockfile | undefined> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new CliError(EXIT.error, `Cannot read ${path}: ${(error as Error).message}`);
  }
  return parseLockfile(text, path, global);
}

/** The lockfile as the commands that change installs use it. */
export interface LoadedLock {
  /** Version 2: a version 1 file's entries upgraded to the versions holding their SKILL.md. */
  lock: Lockfile;
  /** A version 1 file's entries by name, read against the registry (empty for version 2). */
  v1: Map<string, V1Entry>;
  /** The file existed. */
  existed: boolean;
}

/** Reads the lockfile, upgrading a version 1 file (refused with --frozen: it would change). */
export async function readLock(
  ctx: Context,
  target: InstallTarget,
  options: { frozen: boolean; progress: Progress },
): Promise<LoadedLock> {
  const read = await readLockfile(target.lockPath, target.global);
  if (!read) return { lock: emptyLockfile(), v1: new Map(), existed: false };
  if (read.version === 2) return { lock: read.lock, v1: new Map(), existed: true };
  if (options.frozen) throw frozenV1Error();
  return { ...(await upgradeV1(ctx, target, read.lock, options.progress)), existed: true };
}

/** What list and remove need of a lockfile entry, whichever lockfile version holds it. */
export interface InstalledPackage {
  name: string;
  /** Null for a v1 entry (SKILL.md only, no version yet). */
  version: string | null;
  requested: string | null;
  agents: string[];
  dirs: string[];
  files: Record<string, LockedFile>;
  /** What the locked version needs (names), and who needs it. */
  dependencies: string[];
  dependencyOf: string[];
  /** Named by you (false: installed only as a dependency). */
  direct: boolean;
}

export function installedPackages(read: ReadLockfile): InstalledPackage[] {
  const rows: InstalledPackage[] =
    read.version === 2
      ? Object.values(read.lock.packages).map((entry) => ({
          name: entry.name,
          version: entry.version,
          requested: entry.requested,
          agents: entry.agents,
          dirs: entry.dirs,
          files: entry.files,
          dependencies: Object.keys(entry.dependencies ?? {}).sort(byCodePoint),
          dependencyOf: [...(entry.dependencyOf ?? [])],
          direct: isDirect(entry),
        }))
      : Object.values(read.lock.packages).map(installedV1);
  return rows.sort((a, b) => byCodePoint(a.name, b.name));
}

/** A skill installed from a site (docs/discovery.md), with what list and remove read of a package. */
export interface InstalledSite {
  key: string;
  entry: SiteEntry;
  /** Its folders and files as a package's (named by siteLabel, no version). */
  pkg: InstalledPackage;
}

export function installedSites(read: ReadLockfile): InstalledSite[] {
  if (read.version !== 2) return [];
  return siteEntries(read.lock).map(([key, entry]) => ({
    key,
    entry,
    pkg: {
      name: siteLabel(entry.source),
      version: null,
      requested: null,
      agents: entry.agents,
      dirs: entry.dirs,
      files: entry.files,
      dependencies: Object.keys(entry.dependencies ?? {}).sort(byCodePoint),
      dependencyOf: [],
      direct: true,
    },
  }));
}

/** A site skill's name (`pdf`) or lockfile key (`https://example.com#pdf`), rather than a package's. */
export function namesSite(name: string): boolean {
  return /^https?:\/\//i.test(name) || AGENT_SKILL_NAME_PATTERN.test(name);
}

/** The site skill a name means: its key, or its skill name when one site skill has it. */
export function findSite(sites: readonly InstalledSite[], name: string): InstalledSite {
  const matching = sites.filter((site) => site.key === name || site.entry.source.skill === name);
  if (matching.length === 0)
    throw new CliError(EXIT.notFound, `${name} is not installed (not in ${LOCKFILE_NAME})`);
  if (matching.length > 1) {
    throw usageError(
      `${name} is installed from ${matching.length} sites; name one by its key: ${matching.map((site) => site.key).join(', ')}`,
    );
  }
  return matching[0] as InstalledSite;
}

/** Writes back a lockfile read with `readLockfile`, in the version it was read in. */
export function writeBack(path: string, read: ReadLockfile): Promise<void> {
  return writeLockfileText(path, read.version === 2 ? serializeLockfile(read.lock) : serializeV1(read.lock));
}
