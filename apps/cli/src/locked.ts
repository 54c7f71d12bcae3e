import type { VersionDetail } from '@pkgreg/contracts';
import type { Context } from './context.js';
import { CliError, EXIT } from './errors.js';
import { type InstallTarget, type LegacyEntry, labelOf, readLegacyEntries } from './installer.js';
import {
  emptyLockfile,
  LOCKFILE_NAME,
  type LockEntry,
  type Lockfile,
  lockedFilesOf,
  readLockfile,
  sameFiles,
} from './lockfile.js';
import { parsePackageArg } from './names.js';
import type { Progress } from './progress.js';

// The lockfile as the commands that change installs read it: version 2, with the entries of a
// version 1 lockfile read against the registry (README: The lockfile).

export function frozenV1Error(): CliError {
  return new CliError(
    EXIT.integrity,
    `--frozen: ${LOCKFILE_NAME} is lockfileVersion 1 (SKILL.md only); run "pkgreg install" once without --frozen to upgrade it, and commit it`,
  );
}

/** The lockfile as version 2, v1 entries read against the registry. */
export interface LoadedLock {
  lock: Lockfile;
  /** Entries of a v1 lockfile, by name (empty for a v2 lockfile). */
  legacy: Map<string, LegacyEntry>;
  /** The file existed. */
  existed: boolean;
}

export async function loadLock(
  ctx: Context,
  target: InstallTarget,
  progress: Progress,
  frozen: boolean,
): Promise<LoadedLock> {
  const read = await readLockfile(target.lockPath, target.global);
  if (!read) return { lock: emptyLockfile(), legacy: new Map(), existed: false };
  if (read.version === 2) return { lock: read.lock, legacy: new Map(), existed: true };
  if (frozen) throw frozenV1Error();
  const legacy = await readLegacyEntries(ctx, target, Object.values(read.lock.packages), progress);
  const lock = emptyLockfile();
  for (const entry of legacy) if (entry.entry) lock.packages[entry.ref.full] = entry.entry;
  return { lock, legacy: new Map(legacy.map((entry) => [entry.ref.full, entry])), existed: true };
}

export function upgradedNote(ctx: Context, loaded: LoadedLock): void {
  if (loaded.legacy.size)
    ctx.warn(`${LOCKFILE_NAME} upgraded to lockfileVersion 2 (every file of each version)`);
}

/** The manifest of a locked version, refused when it differs from what the lockfile recorded. */
export async function lockedVersion(ctx: Context, entry: LockEntry): Promise<VersionDetail> {
  const ref = parsePackageArg(entry.name);
  const version = await ctx.client.version(ref.scope, ref.name, entry.version);
  if (version.integrity !== entry.integrity || !sameFiles(lockedFilesOf(version), entry.files)) {
    throw new CliError(
      EXIT.integrity,
      `Integrity mismatch: the registry serves ${labelOf(ref, entry.version)} with other files than ${LOCKFILE_NAME} records`,
    );
  }
  return version;
}
