import type { VersionDetail } from '@pkgreg/contracts';
import type { Command } from 'commander';
import satisfies from 'semver/functions/satisfies.js';
import { z } from 'zod';
import type { Agent } from '../agents.js';
import { type Context, createContext, parseOptions } from '../context.js';
import { dependencyFolders, fits, type GraphNode, resolveDependencies } from '../dependencies.js';
import { CliError, EXIT, usageError } from '../errors.js';
import {
  agentDir,
  agentsFromOption,
  checkDirOwners,
  customSkillsDir,
  defaultAgents,
  displayDir,
  type InstallJob,
  type InstallTarget,
  installTarget,
  type JobResult,
  jobFor,
  type LegacyEntry,
  labelOf,
  legacyJob,
  packageDir,
  runJobs,
  unmatchedError,
} from '../installer.js';
import { checkLocked, loadLock, lockedDirs, lockedVersion, upgradedNote } from '../locked.js';
import {
  absoluteDir,
  isDirect,
  LOCKFILE_NAME,
  type LockEntry,
  type Lockfile,
  linkDependants,
  unlockedDependency,
  writeLockfile,
} from '../lockfile.js';
import { type PackageSpec, parsePackageArg, parsePackageSpec } from '../names.js';
import { progressFor, silentProgress } from '../progress.js';
import { checkVersionRisk, deprecatedNote, refuseQuarantined, yankedNote } from '../risk.js';
import { inspectFolder } from '../skill-files.js';
import { resolveVersion } from '../versions.js';

const commaList = z
  .array(z.string())
  .default([])
  .transform((values) =>
    values
      .flatMap((value) => value.split(','))
      .map((value) => value.trim())
      .filter(Boolean),
  );

const InstallInputSchema = z
  .object({
    names: z.array(z.string()),
    agent: commaList,
    dir: z.array(z.string()).default([]),
    global: z.boolean().default(false),
    force: z.boolean().default(false),
    frozen: z.boolean().default(false),
    allowRisk: z.boolean().default(false),
  })
  .refine((input) => !(input.force && input.frozen), { error: '--force and --frozen cannot be combined' })
  .refine((input) => input.names.length > 0 || (input.agent.length === 0 && input.dir.length === 0), {
    error: '--agent and --dir apply to named packages; without names the lockfile decides where',
  });
type InstallInput = z.infer<typeof InstallInputSchema>;

function resultLines(
  target: InstallTarget,
  results: readonly JobResult[],
  shown: Map<InstallJob, string[]>,
  notes: Map<InstallJob, string>,
): string[] {
  const lines: string[] = [];
  for (const { job, written } of results) {
    const label = labelOf(job.ref, job.version.version);
    const note = notes.get(job) ?? '';
    const dirs = shown.get(job) ?? written;
    if (job.quietWhenIntact && written.length === 0) {
      lines.push(`up to date ${label}${note}`);
      continue;
    }
    for (const dir of job.quietWhenIntact ? written : dirs)
      lines.push(`installed ${label} -> ${displayDir(target, dir)}${note}`);
  }
  return lines;
}

/** What a root needs beyond its node: how it is recorded. */
interface RootPlan {
  node: GraphNode;
  requested: string | null;
  agents: string[];
  dirs: string[];
  /** Folders to name in the output (the new ones, else all). */
  shown: string[];
}

/** Says which dependencies no package needs any more (kept: remove them by name). */
function warnOrphans(lock: Lockfile, warn: (line: string) => void): void {
  for (const entry of Object.values(lock.packages)) {
    if (isDirect(entry) || (entry.dependencyOf?.length ?? 0) > 0) continue;
    warn(
      `${entry.name} was installed as a dependency and nothing needs it now; "pkgreg remove ${entry.name}" removes it`,
    );
  }
}

async function installNamed(ctx: Context, target: InstallTarget, input: InstallInput): Promise<void> {
  const specs = new Map<string, PackageSpec>();
  for (const spec of input.names.map(parsePackageSpec)) {
    const seen = specs.get(spec.ref.full);
    if (seen && seen.requested !== spec.requested)
      throw usageError(`${spec.ref.full} is named twice with different versions`);
    specs.set(spec.ref.full, spec);
  }
  const named = agentsFromOption(input.agent);
  const custom = input.dir.map((dir) => customSkillsDir(target, dir));
  let progress = progressFor(specs.size);
  try {
    const loaded = await loadLock(ctx, target, progress, input.frozen);
    if (!loaded.existed && input.frozen) {
      throw new CliError(EXIT.integrity, `--frozen: no ${LOCKFILE_NAME} at ${target.lockPath}`);
    }
    const { lock, legacy } = loaded;
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
      const old = legacy.get(ref.full);
      const wanted = [
        ...named.map((agent) => agentDir(target, agent, ref)),
        ...custom.map((dir) => packageDir(target, dir, ref)),
      ];
      let version: VersionDetail;
      let requested: string | null;
      if (input.frozen) {
        if (!locked) throw new CliError(EXIT.integrity, `--frozen: ${ref.full} is not in ${LOCKFILE_NAME}`);
        const agrees =
          spec.spec.kind === 'latest' ||
          (spec.spec.kind === 'exact' && spec.spec.version === locked.version) ||
          (spec.spec.kind === 'range' &&
            satisfies(locked.version, spec.spec.range, { includePrerelease: true }));
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
        version = await lockedVersion(ctx, locked);
        requested = locked.requested;
      } else {
        requested = spec.typed ? spec.requested : (locked?.requested ?? null);
        const effective =
          spec.typed || requested === null ? spec : parsePackageSpec(`${ref.full}@${requested}`);
        version = await resolveVersion(ctx, ref, effective.spec);
      }
      // Only an exact version (typed, or locked) reaches a yanked one: ranges and latest skip them.
      if (version.yanked) progress.note(yankedNote(`${ref.full}@${version.version}`, version.yankReason));
      checkVersionRisk(ref.full, version, input.allowRisk, (line) => progress.note(line));
      const recordedDirs = locked?.dirs ?? old?.dirs ?? [];
      let agents: string[] = [...(locked?.agents ?? old?.entry?.agents ?? [])];
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
      checkDirOwners(lock, ref, dirs, target);
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
    const jobs: InstallJob[] = [];
    const shown = new Map<InstallJob, string[]>();
    const notes = new Map<InstallJob, string>();
    for (const node of nodes) {
      const root = rootFolders.get(node.ref.full);
      const locked = lock.packages[node.ref.full];
      const place = folders.get(node.ref.full) as { dirs: string[]; agents: string[] };
      if (!root) checkDirOwners(lock, node.ref, place.dirs, target);
      const job = jobFor({
        ref: node.ref,
        version: node.version,
        source: node.source,
        requested: root ? root.requested : (locked?.requested ?? null),
        agents: place.agents,
        dirs: place.dirs,
        locked,
        legacy: root ? legacy.get(node.ref.full) : undefined,
        // A dependency you named before stays yours; one met only as a dependency is not.
        direct: root ? true : locked ? isDirect(locked) : false,
      });
      if (!root) {
        job.quietWhenIntact = true;
        notes.set(job, ` (dependency of ${node.requiredBy.join(', ')})`);
      } else shown.set(job, root.shown);
      jobs.push(job);
    }
    // A v1 lockfile is upgraded whole: the other packages are restored as the versions holding their SKILL.md.
    for (const entry of legacy.values()) {
      if (specs.has(entry.ref.full) || jobs.some((job) => job.ref.full === entry.ref.full)) continue;
      const job = legacyJob(entry);
      if (!job) throw unmatchedError(entry);
      jobs.push(job);
    }
    if (jobs.length !== specs.size) {
      progress.done();
      progress = progressFor(jobs.length);
    }
    const results = await runJobs(ctx, target, jobs, {
      force: input.force,
      modifiedHint: 'use --force to overwrite',
      progress,
      lockedDirs: lockedDirs(lock),
    });
    progress.done();
    for (const line of resultLines(target, results, shown, notes)) ctx.out(line);
    if (!input.frozen) {
      for (const job of jobs) lock.packages[job.ref.full] = job.entry;
      linkDependants(lock);
      await writeLockfile(target.lockPath, lock);
      upgradedNote(ctx, loaded);
      warnOrphans(lock, (line) => ctx.warn(line));
    }
  } finally {
    progress.done();
  }
}

async function installFromLock(ctx: Context, target: InstallTarget, input: InstallInput): Promise<void> {
  const loaded = await loadLock(ctx, target, silentProgress(), input.frozen);
  if (!loaded.existed) {
    throw new CliError(
      EXIT.error,
      `No ${LOCKFILE_NAME} at ${target.lockPath}; run "pkgreg install <@scope/name>" first`,
    );
  }
  const { lock, legacy } = loaded;
  for (const entry of legacy.values()) if (!entry.entry) throw unmatchedError(entry);
  // Restoring exactly what is locked must never leave a skill without what it needs.
  const missing = unlockedDependency(lock, (version, range) => fits(version, range));
  if (missing) {
    const what = missing.locked
      ? `locks ${missing.name} at ${missing.locked}, outside ${missing.range}`
      : `does not lock ${missing.name}`;
    throw new CliError(
      EXIT.error,
      `${LOCKFILE_NAME} ${what}, which ${missing.entry.name}@${missing.entry.version} needs${missing.range ? ` (${missing.range})` : ''}; run "pkgreg install ${missing.entry.name}" to install it`,
    );
  }
  const entries = Object.values(lock.packages).sort((a, b) => (a.name < b.name ? -1 : 1));
  if (entries.length === 0) {
    ctx.out(`Nothing to install: ${LOCKFILE_NAME} lists no packages.`);
    return;
  }
  const lines: string[] = [];
  const pending: LockEntry[] = [];
  const jobs: InstallJob[] = [];
  for (const entry of entries) {
    const job = legacy.has(entry.name) ? legacyJob(legacy.get(entry.name) as LegacyEntry) : undefined;
    if (job) {
      jobs.push(job);
      continue;
    }
    // Folders already holding the locked files need nothing from the registry (CI caches stay offline).
    const states = await Promise.all(
      entry.dirs.map((dir) => inspectFolder(absoluteDir(target.base, dir), entry.files)),
    );
    if (states.every((state) => state.kind === 'intact'))
      lines.push(`up to date ${entry.name}@${entry.version}`);
    else pending.push(entry);
  }
  const progress = progressFor(pending.length + jobs.length);
  try {
    for (const entry of pending) {
      progress.status(`resolving ${entry.name}@${entry.version}`);
      const version = await lockedVersion(ctx, entry);
      jobs.push({ ref: parsePackageArg(entry.name), version, entry, previous: entry.files });
    }
    // A restore writes what a named install would refuse unless it asks the same (issue 26): still
    // listed, not quarantined, the risk of the locked version. Folders already intact are not asked.
    for (const job of jobs) {
      await checkLocked(ctx, job.ref, job.version, {
        allowRisk: input.allowRisk,
        note: (line) => progress.note(line),
      });
    }
    const results = await runJobs(ctx, target, jobs, {
      force: input.force,
      modifiedHint: input.frozen
        ? 'restore the files or update the lockfile'
        : 'use --force to restore the locked version',
      progress,
      lockedDirs: lockedDirs(lock),
    });
    for (const { job, written } of results) {
      const label = labelOf(job.ref, job.version.version);
      if (written.length === 0) lines.push(`up to date ${label}`);
      for (const dir of written) lines.push(`installed ${label} -> ${displayDir(target, dir)}`);
    }
  } finally {
    progress.done();
  }
  for (const line of lines.sort()) ctx.out(line);
  if (legacy.size && !input.frozen) {
    await writeLockfile(target.lockPath, lock);
    upgradedNote(ctx, loaded);
  }
}

export async function install(
  names: string[],
  options: Record<string, unknown>,
  command: Command,
): Promise<void> {
  const input = parseOptions(InstallInputSchema, { ...options, names });
  // Names and versions are checked before anything is read or fetched.
  for (const name of input.names) parsePackageSpec(name);
  agentsFromOption(input.agent);
  const ctx = await createContext(command);
  const target = installTarget(ctx, input.global);
  if (input.names.length) await installNamed(ctx, target, input);
  else await installFromLock(ctx, target, input);
}
