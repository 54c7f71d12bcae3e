import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import type { VersionDetail } from '@pkgreg/contracts';
import {
  AGENTS,
  type Agent,
  agentList,
  detectAgents,
  findAgent,
  type Roots,
  rootsFor,
  SHARED_SKILLS_DIR,
  skillsDirOf,
  UNIVERSAL_AGENT,
} from './agents.js';
import { archiveBound, unpackArchive } from './archive.js';
import type { Context } from './context.js';
import { CliError, EXIT, usageError } from './errors.js';
import {
  absoluteDir,
  FILE_MODES,
  isDirect,
  LOCKFILE_NAME,
  type LockEntry,
  type LockEntryV1,
  type LockedFile,
  type Lockfile,
  lockDirOf,
  lockedDependenciesOf,
  lockedFilesOf,
  upgradedAgents,
  upgradeV1Entry,
  v1Dirs,
} from './lockfile.js';
import { type PackageRef, parsePackageArg } from './names.js';
import { createDownloadBar, type Progress } from './progress.js';
import { badSegment, foldCollision, foldPath, type GuardedFolder, guardFolder } from './safe-folders.js';
import {
  checkManifest,
  describeChanges,
  type FolderState,
  inspectFolder,
  type SkillFile,
} from './skill-files.js';
import {
  discardStaged,
  removeFolder,
  removeOld,
  type StagedFolder,
  stageFolder,
  swapIntoPlace,
} from './staging.js';
import { findV1Version } from './versions.js';

/** Where skills are written and which lockfile records them. */
export interface InstallTarget {
  /** Folder the lockfile's folders are relative to: the project, or the home folder with --global. */
  base: string;
  lockPath: string;
  global: boolean;
  roots: Roots;
}

export function installTarget(ctx: Context, global: boolean, cwd = process.cwd()): InstallTarget {
  const roots = rootsFor(ctx.env, cwd);
  // A global install is recorded beside the config file, not in whichever project the user stands in.
  if (global) return { base: ctx.env.home, lockPath: join(ctx.env.configDir, LOCKFILE_NAME), global, roots };
  return { base: cwd, lockPath: join(cwd, LOCKFILE_NAME), global, roots };
}

/** A lockfile folder as the user reads it (`~/…` for global installs). */
export function displayDir(target: InstallTarget, dir: string): string {
  return target.global && !dir.startsWith('/') ? `~/${dir}` : dir;
}

/** The agents named by --agent (ids or aliases); an unknown one is a usage error. */
export function agentsFromOption(names: readonly string[]): Agent[] {
  const agents: Agent[] = [];
  for (const name of names) {
    const agent = findAgent(name);
    if (!agent) {
      throw usageError(
        `--agent: unknown agent "${name}"; known agents: ${AGENTS.map((a) => a.id).join(', ')} (or --dir <path>)`,
      );
    }
    if (!agents.includes(agent)) agents.push(agent);
  }
  return agents;
}

/**
 * A --dir skills folder, absolute; it must lie inside the project (or the home folder with --global)
 * and be made of plain folder names (safe-folders.ts). Links on disk are checked before writing.
 */
export function customSkillsDir(target: InstallTarget, value: string, cwd = process.cwd()): string {
  const where = target.global ? 'your home folder' : 'the project folder';
  const absolute = resolve(cwd, value);
  const rel = relative(target.base, absolute);
  if (rel === '') throw usageError(`--dir ${value} is ${where} itself; name a skills folder inside it`);
  if (rel === '..' || rel.startsWith(`..${sep}`) || isAbsolute(rel)) {
    throw usageError(`--dir ${value} is outside ${where} (${target.base})`);
  }
  for (const segment of rel.split(sep)) {
    if (foldPath(segment) === '.git') throw usageError(`--dir ${value} is inside a .git folder`);
    const why = badSegment(segment);
    if (why) throw usageError(`--dir ${value} has ${why}`);
  }
  return absolute;
}

/** The folders a lockfile folder may lie in: the project, or with --global the user's, most specific first. */
function rootsOf(target: InstallTarget): string[] {
  if (!target.global) return [target.base];
  const { home, config, claude, codex } = target.roots;
  return [...new Set([claude, codex, config, home])].sort((a, b) => b.length - a.length);
}

/**
 * Checks a lockfile folder on disk before pkgreg writes to or deletes it (safe-folders.ts): inside its
 * root, no symbolic link from the root down, no name a case-insensitive file system would merge.
 * Returns the real path to use; throws exit 5.
 */
export function guardDir(target: InstallTarget, dir: string): GuardedFolder {
  const absolute = absoluteDir(target.base, dir);
  const name = (path: string) => displayDir(target, lockDirOf(target.base, path));
  const root = rootsOf(target).find((candidate) => {
    const rel = relative(candidate, absolute);
    return rel !== '' && rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel);
  });
  if (root === undefined) {
    const where = target.global ? "your home folder and the agents' folders" : 'the project folder';
    throw new CliError(EXIT.integrity, `${name(absolute)} is outside ${where}`);
  }
  return guardFolder(root, absolute, name);
}

/** The same check again, right before a rename: the folder must still be where it was found. */
export function recheck(target: InstallTarget, dir: string, path: string): () => void {
  return () => {
    if (guardDir(target, dir).path !== path) {
      throw new CliError(EXIT.integrity, `${displayDir(target, dir)} moved while pkgreg was changing it`);
    }
  };
}

/** The lockfile folder of a package under an absolute skills folder. */
export function packageDir(target: InstallTarget, skillsDir: string, ref: PackageRef): string {
  return lockDirOf(target.base, join(skillsDir, ref.name));
}

export function agentDir(target: InstallTarget, agent: Agent, ref: PackageRef): string {
  return packageDir(target, skillsDirOf(agent, target.roots, target.global), ref);
}

/** The skills folders (lockfile form, without the package) that a set of agents reads, for messages. */
function skillsDirsOf(target: InstallTarget, agents: readonly Agent[]): string[] {
  const dirs = agents.map((agent) =>
    displayDir(target, lockDirOf(target.base, skillsDirOf(agent, target.roots, target.global))),
  );
  return [...new Set(dirs)];
}

/**
 * The agents to install for when none was named: those detected in the project or the home folder, or
 * the universal `.agents/skills` when there is none. The choice is said on stderr.
 */
export function defaultAgents(target: InstallTarget, note: (line: string) => void): Agent[] {
  const detected = detectAgents(target.roots, target.global);
  if (detected.length) {
    note(
      `Detected ${agentList(detected)}: installing into ${skillsDirsOf(target, detected).join(', ')} (choose with --agent or --dir)`,
    );
    return detected;
  }
  const universal = findAgent(UNIVERSAL_AGENT) as Agent;
  const shared = AGENTS.filter(
    (agent) => agent.projectDir === SHARED_SKILLS_DIR && agent.id !== UNIVERSAL_AGENT,
  )
    .slice(0, 4)
    .map((agent) => agent.displayName);
  note(
    `No agent detected ${target.global ? 'in your home folder' : 'in this project or your home folder'}: installing into ${skillsDirsOf(target, [universal]).join(', ')}, which ${shared.join(', ')} and others read (choose with --agent or --dir)`,
  );
  return [universal];
}

/** Two packages with the same name in different scopes would share a folder; nested folders clash too. */
export function checkDirOwners(
  lock: Lockfile,
  ref: PackageRef,
  dirs: readonly string[],
  target: InstallTarget,
): void {
  // Compared as a case-insensitive file system would: `.Claude/skills/x` is `.claude/skills/x` there.
  const inside = (a: string, b: string) => {
    const [x, y] = [foldPath(a), foldPath(b)];
    return x === y || x.startsWith(`${y}/`);
  };
  for (const [key, entry] of Object.entries(lock.packages)) {
    if (key === ref.full) continue;
    for (const dir of dirs) {
      const clash = entry.dirs.find((other) => inside(dir, other) || inside(other, dir));
      if (clash) {
        throw new CliError(
          EXIT.error,
          `${ref.full}: ${displayDir(target, clash)} already belongs to ${key}; remove that skill first`,
        );
      }
    }
  }
}

// ---- the install pipeline ---------------------------------------------------------------------------

/** One package to put in place at one version. */
export interface InstallJob {
  ref: PackageRef;
  version: VersionDetail;
  /** What the lockfile records once it is in place. */
  entry: LockEntry;
  /** The files the lockfile said these folders hold (undefined for a first install). */
  previous: Record<string, LockedFile> | undefined;
  /** Folders of a lockfileVersion 1 install that no agent reads any more, and what they held. */
  stale?: { dirs: string[]; files: Record<string, LockedFile> };
  /** When the folders already hold this version, say "up to date" instead of "installed". */
  quietWhenIntact?: boolean;
}

/** A job installing `version` where a package is (or will be) locked, measured against what it held. */
export function jobFor(args: {
  ref: PackageRef;
  version: VersionDetail;
  source: { sourceRepo: string; sourcePath: string };
  requested: string | null;
  agents: readonly string[];
  dirs: readonly string[];
  /** The lockfile's entry (v2, or upgraded from v1), when the package is locked. */
  locked: LockEntry | undefined;
  legacy: LegacyEntry | undefined;
  /** Named by you; false when installed only as a dependency (default: as locked, else true). */
  direct?: boolean;
}): InstallJob {
  const { ref, version, locked, legacy } = args;
  return {
    ref,
    version,
    entry: {
      name: ref.full,
      version: version.version,
      requested: args.requested,
      integrity: version.integrity,
      sourceRepo: args.source.sourceRepo,
      sourcePath: args.source.sourcePath,
      sourceCommit: version.sourceCommit,
      agents: [...new Set(args.agents)],
      dirs: [...new Set(args.dirs)],
      files: lockedFilesOf(version),
      dependencies: lockedDependenciesOf(version),
      direct: (args.direct ?? (locked ? isDirect(locked) : true)) ? undefined : false,
    },
    previous: locked?.files ?? (legacy ? legacyBaseline(legacy.v1) : undefined),
    stale: legacy?.stale,
  };
}

export interface RunOptions {
  force: boolean;
  /** What to suggest when a folder was modified. */
  modifiedHint: string;
  progress: Progress;
  /** Every folder the lockfile records: the jobs' folders may not be one of them in another case. */
  lockedDirs: Iterable<string>;
}

export function labelOf(ref: PackageRef, version: string): string {
  return `${ref.full}@${version}`;
}

interface FolderPlan {
  dir: string;
  /** The folder checked on disk (guardDir): where it is read, written and deleted. */
  path: string;
  write: boolean;
}

/** Decides per folder: write, keep (it already holds the version), or refuse (modified). */
async function planFolders(
  target: InstallTarget,
  job: InstallJob,
  modified: string[],
): Promise<FolderPlan[]> {
  const incoming = lockedFilesOf(job.version);
  const plans: FolderPlan[] = [];
  for (const dir of job.entry.dirs) {
    const { path } = guardDir(target, dir);
    const current = await inspectFolder(path, incoming);
    if (current.kind === 'intact') {
      plans.push({ dir, path, write: false });
      continue;
    }
    // Measured against what the lockfile says was installed there; a folder never installed is measured
    // against the incoming version, so one holding something else is not silently replaced.
    const baseline: FolderState = job.previous ? await inspectFolder(path, job.previous) : current;
    if (baseline.kind === 'modified') modified.push(...describeChanges(displayDir(target, dir), baseline));
    plans.push({ dir, path, write: true });
  }
  return plans;
}

export function modifiedError(ref: PackageRef, modified: string[], hint: string): CliError {
  const shown = modified.length > 5 ? [...modified.slice(0, 5), `${modified.length - 5} more`] : modified;
  return new CliError(
    EXIT.integrity,
    `${ref.full}: ${shown.join(', ')} ${modified.length === 1 ? 'was' : 'were'} modified locally (differs from ${LOCKFILE_NAME}); ${hint}`,
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

/**
 * Puts every job in place or none: folders checked (modified ones refused unless --force), archives
 * downloaded and checked against their manifests, every folder staged, then all swapped in at once.
 */
export async function runJobs(
  ctx: Context,
  target: InstallTarget,
  jobs: readonly InstallJob[],
  options: RunOptions,
): Promise<JobResult[]> {
  // Every folder is checked before anything is downloaded or written (safe-folders.ts): names that
  // one case-insensitive file system would merge, then each folder on disk.
  const clash = foldCollision(new Set([...options.lockedDirs, ...jobs.flatMap((job) => job.entry.dirs)]));
  if (clash) {
    throw new CliError(
      EXIT.integrity,
      `${displayDir(target, clash[0])} and ${displayDir(target, clash[1])} are the same folder on a case-insensitive file system; pkgreg does not write where one name could mean the other`,
    );
  }
  const planned: {
    job: InstallJob;
    plans: FolderPlan[];
    stale: { dir: string; folder: GuardedFolder }[];
  }[] = [];
  for (const job of jobs) {
    checkManifest(labelOf(job.ref, job.version.version), job.version);
    const modified: string[] = [];
    const plans = await planFolders(target, job, modified);
    if (modified.length && !options.force) throw modifiedError(job.ref, modified, options.modifiedHint);
    planned.push({ job, plans, stale: staleFolders(target, job) });
  }
  const files = await downloadAll(ctx, planned, options.progress);
  const staged: StagedFolder[] = [];
  let old: string[];
  try {
    for (const { job, plans } of planned) {
      const content = files.get(job);
      for (const plan of plans) {
        if (!plan.write || !content) continue;
        staged.push(await stageFolder(plan.path, content, recheck(target, plan.dir, plan.path)));
      }
    }
    old = swapIntoPlace(staged);
  } catch (error) {
    await discardStaged(staged);
    throw error;
  }
  await removeOld(old);
  const results: JobResult[] = [];
  for (const { job, plans, stale } of planned) {
    const written = plans.filter((plan) => plan.write).map((plan) => plan.dir);
    await removeStale(target, job, stale, options.progress);
    if (written.length) await trackInstall(ctx, options.progress, job.ref);
    results.push({ job, written });
  }
  return results;
}

// ---- lockfileVersion 1 ------------------------------------------------------------------------------

/** A v1 entry read against the registry: the version holding its SKILL.md, if any, and today's folders. */
export interface LegacyEntry {
  v1: LockEntryV1;
  ref: PackageRef;
  /** The version whose SKILL.md v1 locked; null when none has it. */
  match: VersionDetail | null;
  /** The upgraded entry (null without a match). */
  entry: LockEntry | null;
  /** Today's folders of its agents. */
  dirs: string[];
  /** What v1 wrote: SKILL.md, in the v1 folders. */
  stale: { dirs: string[]; files: Record<string, LockedFile> };
}

export function legacyBaseline(v1: LockEntryV1): Record<string, LockedFile> {
  return { 'SKILL.md': { mode: FILE_MODES.file, sha256: v1.sha256 } };
}

/** Finds, for each v1 entry, the version that holds the SKILL.md it locked. */
export async function readLegacyEntries(
  ctx: Context,
  target: InstallTarget,
  entries: readonly LockEntryV1[],
  progress: Progress,
): Promise<LegacyEntry[]> {
  const legacy: LegacyEntry[] = [];
  for (const v1 of entries) {
    const ref = parsePackageArg(v1.name);
    progress.status(`reading ${ref.full} (${LOCKFILE_NAME} version 1)`);
    const dirFor = (id: string) => agentDir(target, findAgent(id) as Agent, ref);
    const dirs = [...new Set(upgradedAgents(v1).map(dirFor))];
    let match: VersionDetail | null;
    try {
      match = await findV1Version(ctx, ref, v1);
    } catch (error) {
      if (error instanceof CliError && error.exitCode === EXIT.notFound) match = null;
      else throw error;
    }
    legacy.push({
      v1,
      ref,
      match,
      entry: match ? upgradeV1Entry(v1, match, dirFor) : null,
      dirs,
      stale: { dirs: v1Dirs(v1), files: legacyBaseline(v1) },
    });
  }
  return legacy;
}

export function unmatchedError(legacy: LegacyEntry): CliError {
  return new CliError(
    EXIT.integrity,
    `${legacy.ref.full}: ${LOCKFILE_NAME} (lockfileVersion 1) locks a SKILL.md (sha256 ${legacy.v1.sha256.slice(0, 12)}) that no version of ${legacy.ref.full} holds; run "pkgreg update ${legacy.ref.full}" to install its latest version, or "pkgreg remove ${legacy.ref.full}"`,
  );
}

/** The job restoring a matched v1 entry as its version, in today's folders. */
export function legacyJob(legacy: LegacyEntry): InstallJob | undefined {
  if (!legacy.match || !legacy.entry) return undefined;
  return {
    ref: legacy.ref,
    version: legacy.match,
    entry: legacy.entry,
    previous: legacy.entry.files,
    stale: legacy.stale,
    quietWhenIntact: true,
  };
}
