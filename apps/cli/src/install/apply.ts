import { archiveBound, unpackArchive } from '../archive.js';
import { ATTESTATION_MISSING, checkAttestations } from '../attestations.js';
import type { Context } from '../context.js';
import { CliError, EXIT } from '../errors.js';
import { LOCKFILE_NAME, type LockedFile, lockedFilesOf } from '../lockfile/lockfile.js';
import type { PackageRef } from '../names.js';
import { createDownloadBar, type Progress } from '../progress.js';
import { foldCollision, type GuardedFolder } from '../safe-folders.js';
import { type SignatureChecker, signatureChecker, signatureError } from '../signatures.js';
import {
  checkManifest,
  describeChanges,
  type FolderState,
  inspectFolder,
  type SkillFile,
} from '../skill-files.js';
import {
  discardStaged,
  removeFolder,
  removeOld,
  type StagedFolder,
  stageFolder,
  swapIntoPlace,
} from '../staging.js';
import { checkpointReader } from '../transparency-log.js';
import type { InstallJob } from './plan.js';
import {
  displayDir,
  type FolderOwner,
  guardDir,
  type InstallTarget,
  recheck,
  refuseSharedFolder,
} from './targets.js';

// The second half of install (README: How install works): the jobs of plan.ts put in place, all or
// none. Each version's registry signature checked first (the archive is later checked against the
// integrity it signs), then every folder checked on disk, then each archive downloaded and checked
// against its manifest, every folder staged beside its place, all swapped in at once, then the
// downloads counted. Writing the lockfile is the caller's last step.

export interface ApplyOptions {
  force: boolean;
  /** What to suggest when a folder was modified. */
  modifiedHint: string;
  progress: Progress;
  /** Every folder the lockfile records: the jobs' folders may not be one of them in another case. */
  lockedDirs: Iterable<string>;
  /** Check the registry's signatures (false: --no-verify, warned about by the caller). */
  verify: boolean;
  /**
   * Site skills' folders (docs/discovery.md), downloaded and checked by the caller: staged and swapped
   * in with the jobs', so a run that installs both writes all or none.
   */
  alsoWrite?: readonly FolderItem[];
}

/** Folders to write and the files that go in each. */
export interface FolderItem {
  /** Whose they are, for messages (a site skill's key). */
  owner?: string;
  plans: readonly FolderPlan[];
  files: SkillFile[] | undefined;
}

export function labelOf(ref: PackageRef, version: string): string {
  return `${ref.full}@${version}`;
}

export interface FolderPlan {
  dir: string;
  /** The folder checked on disk (guardDir): where it is read, written and deleted. */
  path: string;
  write: boolean;
}

/**
 * Decides per folder of `dirs`: write, keep (it already holds `incoming`), or refuse (modified since
 * `previous`, what the lockfile says was installed there): the refusals are added to `modified`.
 */
export async function checkFolders(
  target: InstallTarget,
  dirs: readonly string[],
  incoming: Record<string, LockedFile>,
  previous: Record<string, LockedFile> | undefined,
  modified: string[],
): Promise<FolderPlan[]> {
  const plans: FolderPlan[] = [];
  for (const dir of dirs) {
    const { path } = guardDir(target, dir);
    const current = await inspectFolder(path, incoming);
    if (current.kind === 'intact') {
      plans.push({ dir, path, write: false });
      continue;
    }
    // Measured against what the lockfile says was installed there; a folder never installed is measured
    // against the incoming version, so one holding something else is not silently replaced.
    const baseline: FolderState = previous ? await inspectFolder(path, previous) : current;
    if (baseline.kind === 'modified') modified.push(...describeChanges(displayDir(target, dir), baseline));
    plans.push({ dir, path, write: true });
  }
  return plans;
}

export function modifiedError(owner: string, modified: string[], hint: string): CliError {
  const shown = modified.length > 5 ? [...modified.slice(0, 5), `${modified.length - 5} more`] : modified;
  return new CliError(
    EXIT.integrity,
    `${owner}: ${shown.join(', ')} ${modified.length === 1 ? 'was' : 'were'} modified locally (differs from ${LOCKFILE_NAME}); ${hint}`,
  );
}

/** Downloads and checks every archive needed; a bar on a terminal when the download is big. */
async function downloadAll(
  ctx: Context,
  jobs: readonly { job: InstallJob; plans: FolderPlan[] }[],
  progress: Progress,
): Promise<Map<InstallJob, SkillFile[]>> {
  const needed = jobs.filter(({ plans }) => plans.some((plan) => plan.write)).map(({ job }) => job);
  const files = new Map<InstallJob, SkillFile[]>();
  if (needed.length === 0) return files;
  const totalBytes = needed.reduce((sum, job) => sum + job.version.totalBytes, 0);
  const totalFiles = needed.reduce((sum, job) => sum + job.version.fileCount, 0);
  const bar = await createDownloadBar(totalBytes, totalFiles);
  if (bar) progress.done();
  let doneBytes = 0;
  try {
    for (const job of needed) {
      const label = labelOf(job.ref, job.version.version);
      if (!bar) progress.step(`installing ${label}`);
      const bound = archiveBound(job.version);
      const archive = await ctx.client.archive(job.ref.scope, job.ref.name, job.version.version, {
        maxBytes: bound,
        onProgress: bar
          ? (received, total) => {
              // Archive bytes shown as skill bytes: the bar's total is known before any download starts.
              const share = total ? Math.min(1, received / total) : 0;
              bar.update(doneBytes + Math.round(share * job.version.totalBytes), label);
            }
          : undefined,
      });
      files.set(job, await unpackArchive(label, job.ref.name, job.version, archive));
      doneBytes += job.version.totalBytes;
      bar?.update(doneBytes, label);
    }
  } finally {
    bar?.stop();
  }
  return files;
}

/** --no-verify is a choice to say out loud, once per run: what is installed is not checked. */
export function warnNoVerify(ctx: Context): void {
  ctx.warn(
    "--no-verify: the registry's signatures are not checked; what is installed may not be what it published",
  );
}

/**
 * Refuses (exit 9) a version whose signatures fail while the registry publishes keys, and records in
 * each job's lockfile entry the key that verified it. Keys are fetched once, at the first job. Then
 * the log's checkpoint (once: it must extend the one seen before) and each version's attestation.
 */
async function verifySignatures(ctx: Context, jobs: readonly InstallJob[]): Promise<void> {
  const checker = signatureChecker(ctx);
  for (const job of jobs) {
    const { version } = job;
    const check = await checker.check({ ...version, name: job.ref.full });
    if (!check) return; // the registry signs nothing: nothing to verify, nothing to warn about
    if (!check.ok) throw signatureError(labelOf(job.ref, version.version), check.problem);
    job.entry.signature = { keyid: check.keyid };
  }
  // The log's entry is not waited for (a version is logged seconds after it is signed): `verify` proves it.
  await checkpointReader(ctx, checker)();
  for (const job of jobs) await verifyAttestation(ctx, checker, job);
}

/** An attestation served must verify (exit 9); one that does is recorded for `verify` to require. */
async function verifyAttestation(ctx: Context, checker: SignatureChecker, job: InstallJob): Promise<void> {
  const result = await checkAttestations(ctx, await checker.keys(), job.ref, job.entry);
  if (result.kind === 'failed')
    throw signatureError(labelOf(job.ref, job.version.version), `attestation: ${result.problem}`);
  if (result.kind === 'ok') job.entry.attested = true;
  // A restore of an attested entry: a registry that stopped attesting it is not taken at its word.
  else if (job.entry.attested)
    throw signatureError(labelOf(job.ref, job.version.version), ATTESTATION_MISSING);
}

/** Counts the install. A failed count never fails the install: the files are the user's goal. */
async function trackInstall(ctx: Context, progress: Progress, ref: PackageRef): Promise<void> {
  if (!ctx.track) {
    ctx.debug(`not counting the download of ${ref.full} (DO_NOT_TRACK or "track": false)`);
    return;
  }
  try {
    await ctx.client.track(ref.scope, ref.name);
  } catch (error) {
    progress.note(`warning: could not record the download of ${ref.full}: ${(error as Error).message}`);
  }
}

/** The v1 folders of a job that no agent reads any more, checked on disk like the folders written. */
function staleFolders(target: InstallTarget, job: InstallJob): { dir: string; folder: GuardedFolder }[] {
  const dirs = (job.stale?.dirs ?? []).filter((dir) => !job.entry.dirs.includes(dir));
  return dirs.map((dir) => ({ dir, folder: guardDir(target, dir) }));
}

/** Removes v1 folders no agent reads any more, when they still hold exactly what v1 wrote. */
async function removeStale(
  target: InstallTarget,
  job: InstallJob,
  stale: { dir: string; folder: GuardedFolder }[],
  progress: Progress,
): Promise<void> {
  if (!job.stale) return;
  for (const { dir, folder } of stale) {
    const state = await inspectFolder(folder.path, job.stale.files);
    if (state.kind === 'absent') continue;
    if (state.kind === 'intact') {
      await removeFolder(folder.path, folder.root, recheck(target, dir, folder.path));
      progress.note(
        `note: ${job.ref.full}: removed ${displayDir(target, dir)}, which pkgreg 0.1 wrote and no agent reads`,
      );
    } else {
      progress.note(
        `warning: ${job.ref.full}: left ${displayDir(target, dir)} in place (modified); no agent reads it`,
      );
    }
  }
}

export interface JobResult {
  job: InstallJob;
  /** Folders written. */
  written: string[];
}

/** One line per folder a dependency job wrote, with who needs it (`notes`): `update` and site installs. */
export function dependencyLines(
  target: InstallTarget,
  results: readonly JobResult[],
  notes: ReadonlyMap<InstallJob, string>,
): string[] {
  return results.flatMap(({ job, written }) => {
    const note = notes.get(job);
    if (!note) return [];
    return written.map(
      (dir) => `installed ${labelOf(job.ref, job.version.version)} -> ${displayDir(target, dir)} ${note}`,
    );
  });
}

/**
 * Puts every job in place or none: signatures checked (unless --no-verify), folders checked (modified
 * ones refused unless --force), archives downloaded and checked against their manifests, every folder
 * staged, then all swapped in at once.
 */
export async function applyJobs(
  ctx: Context,
  target: InstallTarget,
  jobs: readonly InstallJob[],
  options: ApplyOptions,
): Promise<JobResult[]> {
  const alsoWrite = options.alsoWrite ?? [];
  // Every folder is checked before anything is downloaded or written (safe-folders.ts): two jobs (or
  // site skills) writing one folder, or one inside the other's (the second staging would remove the
  // first's), names that one case-insensitive file system would merge, then each folder on disk.
  const writers: FolderOwner[] = [
    ...jobs.map((job) => ({ owner: job.ref.full, dirs: job.entry.dirs })),
    ...alsoWrite.map((item) => ({ owner: item.owner ?? 'a site skill', dirs: item.plans.map((p) => p.dir) })),
  ];
  for (const [i, writer] of writers.entries()) refuseSharedFolder(target, writer, writers.slice(i + 1));
  const clash = foldCollision(new Set([...options.lockedDirs, ...writers.flatMap((writer) => writer.dirs)]));
  if (clash) {
    throw new CliError(
      EXIT.integrity,
      `${displayDir(target, clash[0])} and ${displayDir(target, clash[1])} are the same folder on a case-insensitive file system; pkgreg does not write where one name could mean the other`,
    );
  }
  // Site skills alone ask nothing of the registry (not even its signing keys).
  if (jobs.length === 0 && alsoWrite.length > 0) {
    await writeFolders(target, alsoWrite);
    return [];
  }
  for (const job of jobs) {
    // The leaf the record names, for `verify` to prove; a restored entry keeps the one it had.
    if (job.version.log) job.entry.log = { index: job.version.log.index };
  }
  if (options.verify) await verifySignatures(ctx, jobs);
  const planned: {
    job: InstallJob;
    plans: FolderPlan[];
    stale: { dir: string; folder: GuardedFolder }[];
  }[] = [];
  for (const job of jobs) {
    checkManifest(labelOf(job.ref, job.version.version), job.version);
    const modified: string[] = [];
    const plans = await checkFolders(
      target,
      job.entry.dirs,
      lockedFilesOf(job.version),
      job.previous,
      modified,
    );
    if (modified.length && !options.force) throw modifiedError(job.ref.full, modified, options.modifiedHint);
    planned.push({ job, plans, stale: staleFolders(target, job) });
  }
  const files = await downloadAll(ctx, planned, options.progress);
  await writeFolders(target, [
    ...planned.map(({ job, plans }) => ({ plans, files: files.get(job) })),
    ...alsoWrite,
  ]);
  const results: JobResult[] = [];
  for (const { job, plans, stale } of planned) {
    const written = plans.filter((plan) => plan.write).map((plan) => plan.dir);
    await removeStale(target, job, stale, options.progress);
    if (written.length) await trackInstall(ctx, options.progress, job.ref);
    results.push({ job, written });
  }
  return results;
}

/**
 * Stages each folder to write beside its place, swaps them all in at once (a failure undoes those
 * done and discards the staged ones), then removes the old copies.
 */
export async function writeFolders(target: InstallTarget, items: readonly FolderItem[]): Promise<void> {
  const staged: StagedFolder[] = [];
  let old: string[];
  try {
    for (const { plans, files } of items) {
      for (const plan of plans) {
        if (!plan.write || !files) continue;
        staged.push(await stageFolder(plan.path, files, recheck(target, plan.dir, plan.path)));
      }
    }
    old = swapIntoPlace(staged);
  } catch (error) {
    await discardStaged(staged);
    throw error;
  }
  await removeOld(old);
}
