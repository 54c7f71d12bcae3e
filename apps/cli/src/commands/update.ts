import type { Command } from 'commander';
import { z } from 'zod';
import { type Context, createContext, parseOptions } from '../context.js';
import { dependencyFolders, type GraphNode, resolveDependencies } from '../dependencies.js';
import { CliError, EXIT, usageError } from '../errors.js';
import {
  displayDir,
  type InstallJob,
  installTarget,
  jobFor,
  labelOf,
  legacyJob,
  runJobs,
  unmatchedError,
} from '../installer.js';
import {
  isDirect,
  LOCKFILE_NAME,
  type Lockfile,
  linkDependants,
  upgradedAgents,
  writeLockfile,
} from '../lockfile.js';
import { parsePackageArg } from '../names.js';
import { lockedDirs } from '../locked.js';
import { progressFor, silentProgress } from '../progress.js';
import { checkVersionRisk, refuseQuarantined } from '../risk.js';
import { compareWithRegistry, lockedNames, requireLock } from './outdated.js';

const UpdateInputSchema = z.object({
  names: z.array(z.string()),
  global: z.boolean().default(false),
  force: z.boolean().default(false),
  allowRisk: z.boolean().default(false),
});

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
      legacy: undefined,
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

export async function update(
  names: string[],
  options: Record<string, unknown>,
  command: Command,
): Promise<void> {
  const input = parseOptions(UpdateInputSchema, { ...options, names });
  const refs = input.names.map((name) => {
    if (name.indexOf('@', 1) > 0) {
      throw usageError(`update takes names only; to change the range, run "pkgreg install ${name}"`);
    }
    return parsePackageArg(name);
  });
  const ctx = await createContext(command);
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
  for (const legacy of loaded.legacy.values()) {
    if (!chosen.includes(legacy.ref.full) && !legacy.entry) throw unmatchedError(legacy);
  }
  const rows = await compareWithRegistry(ctx, loaded, chosen);
  const jobs: InstallJob[] = [];
  const changes = new Map<InstallJob, string>();
  for (const row of rows) {
    const ref = parsePackageArg(row.name);
    const legacy = row.legacy;
    if (row.state !== 'outdated' || !row.wanted || !row.pkg) {
      if (legacy && !legacy.entry) throw unmatchedError(legacy);
      const job = legacy ? legacyJob(legacy) : undefined;
      if (job) jobs.push(job);
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
      agents: base?.agents ?? (legacy ? upgradedAgents(legacy.v1) : []),
      dirs: base?.dirs ?? legacy?.dirs ?? [],
      locked: base ?? undefined,
      legacy,
    });
    jobs.push(job);
    changes.set(
      job,
      `updated ${row.name} ${row.current ?? `(${LOCKFILE_NAME} version 1)`} -> ${version.version}`,
    );
  }
  for (const legacy of loaded.legacy.values()) {
    if (chosen.includes(legacy.ref.full)) continue;
    const job = legacyJob(legacy);
    if (job) jobs.push(job);
  }
  // A new version may need what is not installed yet, or other versions of it (README: Dependencies).
  const needed = await dependencyJobs(ctx, loaded.lock, [...changes.keys()], input.allowRisk);
  jobs.push(...needed.keys());
  const progress = progressFor(jobs.length);
  try {
    const results = await runJobs(ctx, target, jobs, {
      force: input.force,
      modifiedHint: 'use --force to overwrite',
      progress,
      lockedDirs: lockedDirs(loaded.lock),
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
    if (loaded.legacy.size)
      ctx.warn(`${LOCKFILE_NAME} upgraded to lockfileVersion 2 (every file of each version)`);
  }
  for (const row of rows) {
    if (row.state === 'removed') ctx.warn(`${row.name} is no longer in the registry; kept as installed`);
  }
  if (changes.size === 0) ctx.out('All packages are up to date.');
}
