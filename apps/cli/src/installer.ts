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

/** A --dir skills folder, absolute; it must lie inside the project (or the home folder with --global). */
export function customSkillsDir(target: InstallTarget, value: string, cwd = process.cwd()): string {
  const absolute = resolve(cwd, value);
  const rel = relative(target.base, absolute);
  if (rel.startsWith('..') || isAbsolute(rel)) {
    const where = target.global ? 'your home folder' : 'the project folder';
    throw usageError(`--dir ${value} is outside ${where} (${target.base})`);
  }
  if (rel.split(sep).some((segment) => segment.toLowerCase() === '.git')) {
    throw usageError(`--dir ${value} is inside a .git folder`);
  }
  return absolute;
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
  const inside = (a: string, b: string) => a === b || a.startsWith(`${b}/`);
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
}

export function labelOf(ref: PackageRef, version: string): string {
  return `${ref.full}@${version}`;
}

interface FolderPlan {
  dir: string;
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
    const absolute = absoluteDir(target.base, dir);
    const current = await inspectFolder(absolute, incoming);
    if (current.kind === 'intact') {
      plans.push({ dir, write: false });
      continue;
    }
    // Measured against what the lockfile says was installed there; a folder never installed is measured
    // against the incoming version, so one holding something else is not silently replaced.
    const baseline: FolderState = job.previous ? await inspectFolder(absolute, job.previous) : current;
    if (baseline.kind === 'modified') modified.push(...describeChanges(displayDir(target, dir), baseline));
    plans.push({ dir, write: true });
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

/** Removes v1 folders no agent reads any more, when they still hold exactly what v1 wrote. */
async function removeStale(target: InstallTarget, job: InstallJob, progress: Progress): Promise<void> {
  if (!job.stale) return;
  for (const dir of job.stale.dirs) {
    if (job.entry.dirs.includes(dir)) continue;
    const absolute = absoluteDir(target.base, dir);
    const state = await inspectFolder(absolute, job.stale.files);
    if (state.kind === 'absent') continue;
    if (state.kind === 'intact') {
      await removeFolder(absolute, target.base);
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
  const planned: { job: InstallJob; plans: FolderPlan[] }[] = [];
  for (const job of jobs) {
    checkManifest(labelOf(job.ref, job.version.version), job.version);
    const modified: string[] = [];
    const plans = await planFolders(target, job, modified);
    if (modified.length && !options.force) throw modifiedError(job.ref, modified, options.modifiedHint);
    planned.push({ job, plans });
  }
  const files = await downloadAll(ctx, planned, options.progress);
  const staged: StagedFolder[] = [];
  let old: string[];
  try {
    for (const { job, plans } of planned) {
      const content = files.get(job);
      for (const plan of plans) {
        if (!plan.write || !content) continue;
        staged.push(await stageFolder(absoluteDir(target.base, plan.dir), content));
      }
    }
    old = swapIntoPlace(staged);
  } catch (error) {
    await discardStaged(staged);
    throw error;
  }
  await removeOld(old);
  const results: JobResult[] = [];
  for (const { job, plans } of planned) {
    const written = plans.filter((plan) => plan.write).map((plan) => plan.dir);
    await removeStale(target, job, options.progress);
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
