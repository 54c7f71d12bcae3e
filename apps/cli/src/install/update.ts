import type { Command } from 'commander';
import { compareWithRegistry, lockedNames, requireLock } from '../actions/outdated.js';
import type { UpdateOptions } from '../commands/update.js';
import { type Context, createContext } from '../context.js';
import { CliError, EXIT, usageError } from '../errors.js';
import {
  isDirect,
  LOCKFILE_NAME,
  type Lockfile,
  linkDependants,
  lockedDirs,
  writeLockfile,
} from '../lockfile/lockfile.js';
import { upgradedAgents, upgradedNote, upgradeJob, upgradeJobs } from '../lockfile/v1.js';
import { parsePackageArg } from '../names.js';
import { progressFor, silentProgress } from '../progress.js';
import { checkVersionRisk, refuseQuarantined } from '../risk.js';
import { applyJobs, labelOf, warnNoVerify } from './apply.js';
import { type InstallJob, jobFor } from './plan.js';
import { dependencyFolders, type GraphNode, resolveDependencies } from './resolve.js';
import { displayDir, installTarget } from './targets.js';

// `pkgreg update`: each locked package moved to the newest version its range (and what needs it)
// allows, planned like an install (plan.ts, resolve.ts) and applied by apply.ts.

/**
 * Jobs for the dependencies the updated versions need and the lockfile does not hold at a version their
 * ranges allow: resolved as install resolves them, the updated versions fixed.
 */
async function dependencyJobs(
  ctx: Context,
  lock: Lockfile,
  updated: readonly InstallJob[],
  allowRisk: boolean,
): Promise<Map<InstallJob, string>> {
  const jobs = new Map<InstallJob, string>();
  if (!updated.some((job) => job.version.dependencies.length > 0)) return jobs;
  const roots: GraphNode[] = updated.map((job) => ({
    ref: job.ref,
    version: job.version,
    source: { sourceRepo: job.entry.sourceRepo, sourcePath: job.entry.sourcePath },
    root: true,
    requiredBy: [],
  }));
  const nodes = await resolveDependencies(ctx, roots, {
    lock,
    frozen: false,
    allowRisk,
    progress: silentProgress(),
  });
  const folders = dependencyFolders(
    nodes,
    lock,
    new Map(updated.map((job) => [job.ref.full, { dirs: job.entry.dirs, agents: job.entry.agents }])),
    false,
  );
  for (const node of nodes) {
    if (node.root) continue;
    const locked = lock.packages[node.ref.full];
    const place = folders.get(node.ref.full) as { dirs: string[]; agents: string[] };
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

export async function update(input: UpdateOptions, command: Command): Promise<void> {
  const refs = input.names.map((name) => {
    if (name.indexOf('@', 1) > 0) {
      throw usageError(`update takes names only; to change the range, run "pkgreg install ${name}"`);
    }
    return parsePackageArg(name);
  });
  const ctx = await createContext(command);
  if (!input.verify) warnNoVerify(ctx);
  const target = installTarget(ctx, input.global);
  const loaded = await requireLock(ctx, target);
  const all = lockedNames(loaded);
  for (const ref of refs) {
    if (!all.includes(ref.full)) {
      throw new CliError(EXIT.notFound, `${ref.full} is not installed (not in ${LOCKFILE_NAME})`);
    }
  }
  const chosen = refs.length ? [...new Set(refs.map((ref) => ref.full))] : all;
  // A v1 lockfile is upgraded whole, so the packages left as they are need their version found.
  const upgrades = upgradeJobs(loaded.v1, (name) => chosen.includes(name));
  const rows = await compareWithRegistry(ctx, loaded, chosen);
  const jobs: InstallJob[] = [];
  const changes = new Map<InstallJob, string>();
  for (const row of rows) {
    const ref = parsePackageArg(row.name);
    const v1 = row.v1;
    if (row.state !== 'outdated' || !row.wanted || !row.pkg) {
      if (v1) jobs.push(upgradeJob(v1));
      continue;
    }
    // A new version passes the gates of a named install (issue 26): the package not quarantined, the
    // version's risk asked (high: exit 7 without --allow-risk).
    refuseQuarantined(row.name, row.pkg.status, row.pkg.quarantineReason);
    if (row.pkg.status === 'deprecated') {
      const why = row.pkg.deprecationMessage
        ? `: ${row.pkg.deprecationMessage}`
        : '; consider an alternative';
      ctx.warn(`${row.name} is deprecated${why}`);
    }
    const version = await ctx.client.version(ref.scope, ref.name, row.wanted);
    checkVersionRisk(row.name, version, input.allowRisk, (line) => silentProgress().note(line));
    const base = row.entry;
    const job = jobFor({
      ref,
      version,
      source: row.pkg,
      requested: base?.requested ?? null,
      agents: base?.agents ?? (v1 ? upgradedAgents(v1.v1) : []),
      dirs: base?.dirs ?? v1?.dirs ?? [],
      locked: base ?? undefined,
      v1,
    });
    jobs.push(job);
    changes.set(
      job,
      `updated ${row.name} ${row.current ?? `(${LOCKFILE_NAME} version 1)`} -> ${version.version}`,
    );
  }
  jobs.push(...upgrades);
  // A new version may need what is not installed yet, or other versions of it (README: Dependencies).
  const needed = await dependencyJobs(ctx, loaded.lock, [...changes.keys()], input.allowRisk);
  jobs.push(...needed.keys());
  const progress = progressFor(jobs.length);
  try {
    const results = await applyJobs(ctx, target, jobs, {
      force: input.force,
      modifiedHint: 'use --force to overwrite',
      progress,
      lockedDirs: lockedDirs(loaded.lock),
      verify: input.verify,
    });
    progress.done();
    for (const { job, written } of results) {
      const line = changes.get(job);
      if (line) ctx.out(line);
      const note = needed.get(job);
      for (const dir of note ? written : [])
        ctx.out(`installed ${labelOf(job.ref, job.version.version)} -> ${displayDir(target, dir)} ${note}`);
    }
  } finally {
    progress.done();
  }
  if (jobs.length) {
    for (const job of jobs) loaded.lock.packages[job.ref.full] = job.entry;
    linkDependants(loaded.lock);
    await writeLockfile(target.lockPath, loaded.lock);
    if (loaded.v1.size) upgradedNote(ctx);
  }
  for (const row of rows) {
    if (row.state === 'removed') ctx.warn(`${row.name} is no longer in the registry; kept as installed`);
  }
  if (changes.size === 0) ctx.out('All packages are up to date.');
}
