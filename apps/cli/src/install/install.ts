import type { Command } from 'commander';
import { type InstallOptions, isSite } from '../commands/install.js';
import { type Context, createContext } from '../context.js';
import {
  LOCKFILE_NAME,
  linkDependants,
  lockedDirs,
  warnOrphans,
  writeLockfile,
} from '../lockfile/lockfile.js';
import { upgradedNote } from '../lockfile/v1.js';
import { parsePackageSpec } from '../names.js';
import { progressFor } from '../progress.js';
import { applyJobs, type JobResult, labelOf, warnNoVerify } from './apply.js';
import { type NamedPlan, planNamed, planRestore } from './plan.js';
import { agentsFromOption, displayDir, type InstallTarget, installTarget } from './targets.js';

// `pkgreg install`, start to end (README: How install works; "Following the code" lists the stops): the
// plan (plan.ts: versions, dependencies, gates, folders), then applying it (apply.ts: download, verify,
// stage, swap), then the lockfile written.

/** `pkgreg install [names...]`: with names, those packages and what they need, recorded in the lockfile. */
export async function install(input: InstallOptions, command: Command): Promise<void> {
  const site = input.names.find(isSite);
  if (site !== undefined) {
    // A site's skills (docs/discovery.md): their own index, digests and lockfile entries.
    const { installFromSite, parseSite } = await import('./site.js');
    parseSite(site);
    agentsFromOption(input.agent);
    const ctx = await createContext(command);
    return installFromSite(ctx, installTarget(ctx, input.global), input, site);
  }
  // Names, versions and agents are checked before anything is read or fetched.
  const specs = input.names.map(parsePackageSpec);
  agentsFromOption(input.agent);
  const ctx = await createContext(command);
  if (!input.verify) warnNoVerify(ctx);
  const target = installTarget(ctx, input.global);
  if (specs.length === 0) return restore(ctx, target, input);
  const count = new Set(specs.map((spec) => spec.ref.full)).size;
  let progress = progressFor(count);
  try {
    const plan = await planNamed(ctx, target, input, progress);
    if (plan.jobs.length !== count) {
      progress.done();
      progress = progressFor(plan.jobs.length);
    }
    const results = await applyJobs(ctx, target, plan.jobs, {
      force: input.force,
      modifiedHint: 'use --force to overwrite',
      progress,
      lockedDirs: lockedDirs(plan.loaded.lock),
      verify: input.verify,
    });
    progress.done();
    for (const line of namedLines(target, results, plan)) ctx.out(line);
    if (input.frozen) return;
    const { lock } = plan.loaded;
    for (const job of plan.jobs) lock.packages[job.ref.full] = job.entry;
    linkDependants(lock);
    await writeLockfile(target.lockPath, lock);
    if (plan.loaded.v1.size) upgradedNote(ctx);
    warnOrphans(lock, (line) => ctx.warn(line));
  } finally {
    progress.done();
  }
}

/** `pkgreg install` with no names: every folder made to hold exactly what the lockfile lists. */
async function restore(ctx: Context, target: InstallTarget, input: InstallOptions) {
  const plan = await planRestore(ctx, target, input);
  if (!plan) {
    ctx.out(`Nothing to install: ${LOCKFILE_NAME} lists no packages.`);
    return;
  }
  const lines = [...plan.upToDate];
  try {
    // A lockfile of site skills alone asks nothing of the registry (not even its signing keys).
    if (Object.keys(plan.loaded.lock.packages).length > 0 || plan.jobs.length > 0) {
      const results = await applyJobs(ctx, target, plan.jobs, {
        force: input.force,
        modifiedHint: input.frozen
          ? 'restore the files or update the lockfile'
          : 'use --force to restore the locked version',
        progress: plan.progress,
        lockedDirs: lockedDirs(plan.loaded.lock),
        verify: input.verify,
      });
      for (const { job, written } of results) {
        const label = labelOf(job.ref, job.version.version);
        if (written.length === 0) lines.push(`up to date ${label}`);
        for (const dir of written) lines.push(`installed ${label} -> ${displayDir(target, dir)}`);
      }
    }
  } finally {
    plan.progress.done();
  }
  if (plan.loaded.lock.sites) {
    const { restoreSites } = await import('./site.js');
    lines.push(...(await restoreSites(ctx, target, plan.loaded.lock, input)));
  }
  for (const line of lines.sort()) ctx.out(line);
  // Only a version 1 lockfile changes: it is written back upgraded.
  if (plan.loaded.v1.size && !input.frozen) {
    await writeLockfile(target.lockPath, plan.loaded.lock);
    upgradedNote(ctx);
  }
}

/** One line per folder written; "up to date" for a dependency (or upgraded entry) already in place. */
function namedLines(target: InstallTarget, results: readonly JobResult[], plan: NamedPlan): string[] {
  const lines: string[] = [];
  for (const { job, written } of results) {
    const label = labelOf(job.ref, job.version.version);
    const note = plan.notes.get(job) ?? '';
    const dirs = plan.shown.get(job) ?? written;
    if (job.quietWhenIntact && written.length === 0) {
      lines.push(`up to date ${label}${note}`);
      continue;
    }
    for (const dir of job.quietWhenIntact ? written : dirs)
      lines.push(`installed ${label} -> ${displayDir(target, dir)}${note}`);
  }
  return lines;
}
