import type { PackageDetail, VersionDependency, VersionDetail } from '@pkgreg/contracts';
import satisfies from 'semver/functions/satisfies.js';
import type { Agent } from '../agents.js';
import type { InstallOptions } from '../commands/install.js';
import type { Context } from '../context.js';
import { CliError, EXIT, usageError } from '../errors.js';
import {
  absoluteDir,
  isDirect,
  LOCKFILE_NAME,
  type LockEntry,
  type LockedFile,
  type Lockfile,
  lockedDependenciesOf,
  lockedFilesOf,
  unlockedDependency,
} from '../lockfile/lockfile.js';
import { type LoadedLock, readLock } from '../lockfile/read.js';
import { upgradeJobs, type V1Entry, v1Previous } from '../lockfile/v1.js';
import { type PackageRef, type PackageSpec, parsePackageArg, parsePackageSpec } from '../names.js';
import { type Progress, progressFor, silentProgress } from '../progress.js';
import { checkVersionRisk, deprecatedNote, refuseQuarantined, yankedNote } from '../risk.js';
import { inspectFolder } from '../skill-files.js';
import { resolveVersion } from '../versions.js';
import { dependencyFolders, fits, type GraphNode, lockedVersion, resolveDependencies } from './resolve.js';
import {
  agentDir,
  agentsFromOption,
  checkDirOwners,
  customSkillsDir,
  defaultAgents,
  displayDir,
  type FolderOwner,
  type InstallTarget,
  packageDir,
  refuseSharedFolder,
} from './targets.js';

// The first half of install (README: How install works): everything decided before anything is
// downloaded or written. Each package's version (named, or locked), what it depends on, the gates
// (listed, not quarantined, its risk), and the folders it goes to, as one job per package for apply.ts.

/** One package to put in place at one version. */
export interface InstallJob {
  ref: PackageRef;
  version: VersionDetail;
  /** What the lockfile records once it is in place. */
  entry: LockEntry;
  /** The files the lockfile said these folders hold (undefined for a first install). */
  previous: Record<string, LockedFile> | undefined;
  /** Folders the package leaves (a lockfileVersion 1 install's, no agent reads them), and what they held. */
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
  /** Its entry of a lockfileVersion 1 file, when the file was one. */
  v1: V1Entry | undefined;
  /** Named by you; false when installed only as a dependency (default: as locked, else true). */
  direct?: boolean;
}): InstallJob {
  const { ref, version, locked, v1 } = args;
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
    previous: locked?.files ?? (v1 ? v1Previous(v1) : undefined),
    stale: v1?.stale,
  };
}

/** A site skill being installed or updated whose SKILL.md declares dependencies, and where it goes. */
export interface SiteNeeds {
  /** Its `sites` key. */
  key: string;
  dependencies: readonly VersionDependency[];
  dirs: readonly string[];
  agents: readonly string[];
}

/**
 * Who writes which folders in a run (`folders`, as dependencyFolders places them: packages by name,
 * site skills by key), the dependencies named with who needs them.
 */
function runOwners(
  nodes: readonly GraphNode[],
  folders: ReadonlyMap<string, { dirs: string[] }>,
): Map<string, FolderOwner> {
  const owners = new Map<string, FolderOwner>();
  for (const [owner, { dirs }] of folders) owners.set(owner, { owner, dirs });
  for (const node of nodes) {
    const owner = owners.get(node.ref.full);
    if (owner && !node.root) owner.label = `${node.ref.full} (dependency of ${node.requiredBy.join(', ')})`;
  }
  return owners;
}

/**
 * Jobs for the dependencies that new versions (`update`) or site skills (docs/discovery.md) need and the
 * lockfile does not hold at a version their ranges allow, in the folders beside theirs: resolved as
 * install resolves them, the new versions fixed. Each job with the note saying who needs it.
 */
export async function dependencyJobs(
  ctx: Context,
  target: InstallTarget,
  lock: Lockfile,
  requirers: { packages: readonly InstallJob[]; sites: readonly SiteNeeds[] },
  options: { allowRisk: boolean; frozen: boolean; progress: Progress },
): Promise<Map<InstallJob, string>> {
  const jobs = new Map<InstallJob, string>();
  const { packages, sites } = requirers;
  const declared = [
    ...packages.map((job) => job.version.dependencies),
    ...sites.map((site) => site.dependencies),
  ];
  if (!declared.some((dependencies) => dependencies.length > 0)) return jobs;
  const roots: GraphNode[] = packages.map((job) => ({
    ref: job.ref,
    version: job.version,
    source: { sourceRepo: job.entry.sourceRepo, sourcePath: job.entry.sourcePath },
    root: true,
    requiredBy: [],
  }));
  const nodes = await resolveDependencies(ctx, roots, {
    lock,
    frozen: options.frozen,
    allowRisk: options.allowRisk,
    progress: options.progress,
    sites,
  });
  const placed = new Map<string, { dirs: string[]; agents: string[] }>();
  for (const job of packages) placed.set(job.ref.full, { dirs: job.entry.dirs, agents: job.entry.agents });
  for (const site of sites) placed.set(site.key, { dirs: [...site.dirs], agents: [...site.agents] });
  const folders = dependencyFolders(nodes, lock, placed, options.frozen);
  // The lockfile does not record the requirers of this run yet: a dependency is checked against them
  // (and the other dependencies) too, before anything is written.
  const owners = runOwners(nodes, folders);
  for (const node of nodes) {
    if (node.root) continue;
    const locked = lock.packages[node.ref.full];
    const place = folders.get(node.ref.full) as { dirs: string[]; agents: string[] };
    checkDirOwners(lock, node.ref.full, place.dirs, target);
    refuseSharedFolder(target, owners.get(node.ref.full) as FolderOwner, [...owners.values()]);
    const job = jobFor({
      ref: node.ref,
      version: node.version,
      source: node.source,
      requested: locked?.requested ?? null,
      agents: place.agents,
      dirs: place.dirs,
      locked,
      v1: undefined,
      direct: locked ? isDirect(locked) : false,
    });
    // Already in place at that version: nothing to write, nothing to say.
    if (
      locked &&
      locked.version === node.version.version &&
      place.dirs.every((dir) => locked.dirs.includes(dir))
    )
      continue;
    job.quietWhenIntact = true;
    jobs.set(job, `(dependency of ${node.requiredBy.join(', ')})`);
  }
  return jobs;
}

/** A named install, planned. */
export interface NamedPlan {
  loaded: LoadedLock;
  jobs: InstallJob[];
  /** Per named package, the folders to name in the output (the new ones, else all). */
  shown: Map<InstallJob, string[]>;
  /** Per dependency, who needs it. */
  notes: Map<InstallJob, string>;
}

/** What a root needs beyond its node: how it is recorded. */
interface RootPlan {
  node: GraphNode;
  requested: string | null;
  agents: string[];
  dirs: string[];
  shown: string[];
}

/** The version a named package gets with --frozen: the locked one, which must be what was asked. */
async function frozenVersion(
  ctx: Context,
  target: InstallTarget,
  spec: PackageSpec,
  locked: LockEntry | undefined,
  wanted: readonly string[],
): Promise<VersionDetail> {
  const { ref } = spec;
  if (!locked) throw new CliError(EXIT.integrity, `--frozen: ${ref.full} is not in ${LOCKFILE_NAME}`);
  const agrees =
    spec.spec.kind === 'latest' ||
    (spec.spec.kind === 'exact' && spec.spec.version === locked.version) ||
    (spec.spec.kind === 'range' && satisfies(locked.version, spec.spec.range, { includePrerelease: true }));
  if (!agrees) {
    throw new CliError(
      EXIT.integrity,
      `--frozen: ${ref.full} is locked at ${locked.version}, not ${spec.requested}`,
    );
  }
  const extra = wanted.filter((dir) => !locked.dirs.includes(dir));
  if (extra.length) {
    throw new CliError(
      EXIT.integrity,
      `--frozen: ${ref.full} is not locked for ${extra.map((dir) => displayDir(target, dir)).join(', ')}`,
    );
  }
  return lockedVersion(ctx, locked);
}

/**
 * `pkgreg install <names...>`: the lockfile read, each named package resolved and gated, the folders
 * chosen, then what they need (resolve.ts), each package one job.
 */
export async function planNamed(
  ctx: Context,
  target: InstallTarget,
  input: InstallOptions,
  progress: Progress,
): Promise<NamedPlan> {
  const specs = new Map<string, PackageSpec>();
  for (const spec of input.names.map(parsePackageSpec)) {
    const seen = specs.get(spec.ref.full);
    if (seen && seen.requested !== spec.requested)
      throw usageError(`${spec.ref.full} is named twice with different versions`);
    specs.set(spec.ref.full, spec);
  }
  const named = agentsFromOption(input.agent);
  const custom = input.dir.map((dir) => customSkillsDir(target, dir));
  const loaded = await readLock(ctx, target, { frozen: input.frozen, progress });
  if (!loaded.existed && input.frozen) {
    throw new CliError(EXIT.integrity, `--frozen: no ${LOCKFILE_NAME} at ${target.lockPath}`);
  }
  const { lock, v1 } = loaded;
  let detected: Agent[] | undefined;
  const roots: RootPlan[] = [];
  for (const spec of specs.values()) {
    const { ref } = spec;
    progress.status(`resolving ${ref.full}`);
    const pkg = await ctx.client.detail(ref.scope, ref.name);
    if (pkg.status === 'delisted') throw new CliError(EXIT.notFound, `${ref.full}: Package not found`);
    refuseQuarantined(ref.full, pkg.status, pkg.quarantineReason);
    if (pkg.status === 'deprecated') progress.note(deprecatedNote(ref.full, pkg.deprecationMessage));
    const locked = lock.packages[ref.full];
    const wanted = [
      ...named.map((agent) => agentDir(target, agent, ref)),
      ...custom.map((dir) => packageDir(target, dir, ref)),
    ];
    let version: VersionDetail;
    let requested: string | null;
    if (input.frozen) {
      version = await frozenVersion(ctx, target, spec, locked, wanted);
      requested = (locked as LockEntry).requested;
    } else {
      requested = spec.typed ? spec.requested : (locked?.requested ?? null);
      const effective =
        spec.typed || requested === null ? spec : parsePackageSpec(`${ref.full}@${requested}`);
      version = await resolveVersion(ctx, ref, effective.spec);
    }
    // Only an exact version (typed, or locked) reaches a yanked one: ranges and latest skip them.
    if (version.yanked) progress.note(yankedNote(`${ref.full}@${version.version}`, version.yankReason));
    checkVersionRisk(ref.full, version, input.allowRisk, (line) => progress.note(line));
    const recordedDirs = locked?.dirs ?? v1.get(ref.full)?.dirs ?? [];
    let agents: string[] = [...(locked?.agents ?? [])];
    let newDirs = wanted;
    if (wanted.length === 0 && recordedDirs.length === 0) {
      detected ??= defaultAgents(target, (line) => progress.note(line));
      newDirs = detected.map((agent) => agentDir(target, agent, ref));
      agents = [...agents, ...detected.map((agent) => agent.id)];
    } else {
      agents = [...agents, ...named.map((agent) => agent.id)];
    }
    // A package keeps one version for all its copies, so a new version rewrites every recorded folder.
    const dirs = [...new Set([...recordedDirs, ...newDirs])];
    checkDirOwners(lock, ref.full, dirs, target);
    roots.push({
      node: { ref, version, source: pkg, root: true, requiredBy: [] },
      requested,
      agents: [...new Set(agents)],
      dirs,
      shown: newDirs.length ? newDirs : dirs,
    });
  }
  // What the named packages need, breadth-first, one version each (README: Dependencies).
  const nodes = await resolveDependencies(
    ctx,
    roots.map((root) => root.node),
    { lock, frozen: input.frozen, allowRisk: input.allowRisk, progress },
  );
  const rootFolders = new Map(roots.map((root) => [root.node.ref.full, root]));
  const folders = dependencyFolders(nodes, lock, rootFolders, input.frozen);
  // Two packages of this run may not share a folder either (a dependency named like what needs it, or
  // two named packages of one name): the dependencies checked first, to be named first.
  const owners = runOwners(nodes, folders);
  for (const node of [...nodes.filter((n) => !n.root), ...nodes.filter((n) => n.root)])
    refuseSharedFolder(target, owners.get(node.ref.full) as FolderOwner, [...owners.values()]);
  const jobs: InstallJob[] = [];
  const shown = new Map<InstallJob, string[]>();
  const notes = new Map<InstallJob, string>();
  for (const node of nodes) {
    const root = rootFolders.get(node.ref.full);
    const locked = lock.packages[node.ref.full];
    const place = folders.get(node.ref.full) as { dirs: string[]; agents: string[] };
    if (!root) checkDirOwners(lock, node.ref.full, place.dirs, target);
    const job = jobFor({
      ref: node.ref,
      version: node.version,
      source: node.source,
      requested: root ? root.requested : (locked?.requested ?? null),
      agents: place.agents,
      dirs: place.dirs,
      locked,
      v1: root ? v1.get(node.ref.full) : undefined,
      // A dependency you named before stays yours; one met only as a dependency is not.
      direct: root ? true : locked ? isDirect(locked) : false,
    });
    if (!root) {
      job.quietWhenIntact = true;
      notes.set(job, ` (dependency of ${node.requiredBy.join(', ')})`);
    } else shown.set(job, root.shown);
    jobs.push(job);
  }
  // A version 1 lockfile is upgraded whole: the other packages are restored as the versions holding
  // their SKILL.md.
  jobs.push(...upgradeJobs(v1, (name) => specs.has(name) || jobs.some((job) => job.ref.full === name)));
  return { loaded, jobs, shown, notes };
}

/**
 * A package the lockfile names that the registry does not find, asked without credentials: a private
 * package looks missing to a stranger (docs/cli-auth.md), so the message names the way out (a token);
 * the exit code stays "not found" (3), as the registry cannot say which it is.
 */
function maybePrivate(ctx: Context, error: unknown): never {
  if (error instanceof CliError && error.exitCode === EXIT.notFound && !ctx.credentials) {
    throw new CliError(
      EXIT.notFound,
      `${error.message}. If it is private, you have no token for ${new URL(ctx.registry.url).host}: run pkgreg login (or set PKGREG_TOKEN to a read token) and try again`,
      error.detail,
    );
  }
  throw error;
}

/** A restore, planned: the jobs for the folders that differ from the lockfile. */
export interface RestorePlan {
  loaded: LoadedLock;
  jobs: InstallJob[];
  /** The packages whose folders already hold the locked files: "up to date" lines. */
  upToDate: string[];
  /** Counting the jobs. */
  progress: Progress;
}

/**
 * The gates of a named install, for a version taken from the lockfile (issue 26): the package must
 * still be listed (a delisted or removed one: exit 3) and not quarantined (exit 7); a deprecated
 * package and a yanked version are warned about; the version's risk is asked again (high: exit 7
 * without --allow-risk; medium and not scanned: a warning).
 */
async function checkLocked(
  ctx: Context,
  ref: PackageRef,
  version: VersionDetail,
  gates: { allowRisk: boolean; note: (line: string) => void },
): Promise<void> {
  const label = `${ref.full}@${version.version}`;
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

/**
 * `pkgreg install` with no names: exactly what the lockfile lists. Folders already holding the locked
 * files need nothing from the registry (CI caches stay offline); the others get the locked version,
 * checked against the lockfile and gated like a named install. Undefined when nothing is locked.
 */
export async function planRestore(
  ctx: Context,
  target: InstallTarget,
  input: InstallOptions,
): Promise<RestorePlan | undefined> {
  const loaded = await readLock(ctx, target, { frozen: input.frozen, progress: silentProgress() });
  if (!loaded.existed) {
    throw new CliError(
      EXIT.error,
      `No ${LOCKFILE_NAME} at ${target.lockPath}; run "pkgreg install <@scope/name>" first`,
    );
  }
  const { lock, v1 } = loaded;
  // A version 1 lockfile is upgraded whole (its rewrites are jobs), or not at all.
  const upgrades = upgradeJobs(v1, () => false);
  // Restoring exactly what is locked must never leave a skill without what it needs.
  const missing = unlockedDependency(lock, (version, range) => fits(version, range));
  if (missing) {
    const what = missing.locked
      ? `locks ${missing.name} at ${missing.locked}, outside ${missing.range}`
      : `does not lock ${missing.name}`;
    throw new CliError(
      EXIT.error,
      `${LOCKFILE_NAME} ${what}, which ${missing.by.label} needs${missing.range ? ` (${missing.range})` : ''}; run "pkgreg install ${missing.by.install}" to install it`,
    );
  }
  const entries = Object.values(lock.packages).sort((a, b) => (a.name < b.name ? -1 : 1));
  // Site skills (docs/discovery.md) are restored beside the packages (install/site.ts).
  if (entries.length === 0 && Object.keys(lock.sites ?? {}).length === 0) return undefined;
  const upToDate: string[] = [];
  const pending: LockEntry[] = [];
  const jobs: InstallJob[] = [];
  for (const entry of entries) {
    const upgrade = upgrades.find((job) => job.ref.full === entry.name);
    if (upgrade) {
      jobs.push(upgrade);
      continue;
    }
    const states = await Promise.all(
      entry.dirs.map((dir) => inspectFolder(absoluteDir(target.base, dir), entry.files)),
    );
    if (states.every((state) => state.kind === 'intact'))
      upToDate.push(`up to date ${entry.name}@${entry.version}`);
    else pending.push(entry);
  }
  const progress = progressFor(pending.length + jobs.length);
  try {
    for (const entry of pending) {
      progress.status(`resolving ${entry.name}@${entry.version}`);
      const version = await lockedVersion(ctx, entry).catch((error) => maybePrivate(ctx, error));
      jobs.push({ ref: parsePackageArg(entry.name), version, entry, previous: entry.files });
    }
    // A restore writes what a named install would refuse unless it asks the same (issue 26): still
    // listed, not quarantined, the risk of the locked version. Folders already intact are not asked.
    for (const job of jobs) {
      await checkLocked(ctx, job.ref, job.version, {
        allowRisk: input.allowRisk,
        note: (line) => progress.note(line),
      }).catch((error) => maybePrivate(ctx, error));
    }
  } catch (error) {
    progress.done();
    throw error;
  }
  return { loaded, jobs, upToDate, progress };
}
