import type { PackageDetail, VersionDetail } from '@pkgreg/contracts';
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
import { type PackageRef, parsePackageArg } from './names.js';
import type { Progress } from './progress.js';
import { checkVersionRisk, deprecatedNote, refuseQuarantined, yankedNote } from './risk.js';

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

/** Every folder the lockfile records, for the check that no two are one folder in another case. */
export function lockedDirs(lock: Lockfile): string[] {
  return Object.values(lock.packages).flatMap((entry) => entry.dirs);
}

/**
 * The gates of a named install, for a version taken from the lockfile (issue 26): the package must
 * still be listed (a delisted or removed one: exit 3) and not quarantined (exit 7); a deprecated
 * package and a yanked version are warned about; the version's risk is asked again (high: exit 7
 * without --allow-risk; medium and not scanned: a warning).
 */
export async function checkLocked(
  ctx: Context,
  ref: PackageRef,
  version: VersionDetail,
  gates: { allowRisk: boolean; note: (line: string) => void },
): Promise<void> {
  const label = labelOf(ref, version.version);
  const unlisted = () =>
    new CliError(
      EXIT.notFound,
      `${label} (in ${LOCKFILE_NAME}): the registry no longer lists ${ref.full} (delisted or removed), so it is not restored; "pkgreg remove ${ref.full}" drops it`,
    );
  let pkg: PackageDetail;
  try {
    pkg = await ctx.client.detail(ref.scope, ref.name);
  } catch (error) {
    if (error instanceof CliError && error.exitCode === EXIT.notFound) throw unlisted();
    throw error;
  }
  if (pkg.status === 'delisted') throw unlisted();
  refuseQuarantined(ref.full, pkg.status, pkg.quarantineReason);
  if (pkg.status === 'deprecated') gates.note(deprecatedNote(ref.full, pkg.deprecationMessage));
  if (version.yanked) gates.note(yankedNote(label, version.yankReason));
  checkVersionRisk(ref.full, version, gates.allowRisk, gates.note);
}
