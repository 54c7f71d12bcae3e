import type { Command } from 'commander';
import {
  compareWithRegistry,
  lockedNames,
  requireLock,
  uncheckedError,
  warnUnchecked,
} from '../actions/outdated.js';
import type { UpdateOptions } from '../commands/update.js';
import { createContext } from '../context.js';
import { CliError, EXIT, usageError } from '../errors.js';
import {
  LOCKFILE_NAME,
  linkDependants,
  lockedDirs,
  shortDigest,
  siteLabel,
  warnOrphans,
  writeLockfile,
} from '../lockfile/lockfile.js';
import { findSite, installedSites, namesSite } from '../lockfile/read.js';
import { upgradedAgents, upgradedNote, upgradeJob, upgradeJobs } from '../lockfile/v1.js';
import { parsePackageArg } from '../names.js';
import { progressFor, silentProgress } from '../progress.js';
import { checkVersionRisk, refuseQuarantined } from '../risk.js';
import { applyJobs, dependencyLines, warnNoVerify } from './apply.js';
import { dependencyJobs, type InstallJob, jobFor } from './plan.js';
import { prepareSiteJob, type SiteJob, siteFolders, siteNeeds } from './site.js';
import { compareSites, siteUpdateJob } from './site-update.js';
import { installTarget } from './targets.js';

// `pkgreg update`: each locked package moved to the newest version its range (and what needs it)
// allows, planned like an install (plan.ts, resolve.ts) and applied by apply.ts; each site skill to
// what its site's index lists now (site-update.ts), written with them.

export async function update(input: UpdateOptions, command: Command): Promise<void> {
  // A site skill is named by its name or its `sites` key (docs/discovery.md), a package as @scope/name.
  const refs = input.names
    .filter((name) => !namesSite(name))
    .map((name) => {
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
  const installed = installedSites({ version: 2, lock: loaded.lock });
  const siteKeys = input.names.filter(namesSite).map((name) => findSite(installed, name).key);
  const named = input.names.length > 0;
  const chosen = named ? [...new Set(refs.map((ref) => ref.full))] : all;
  // A v1 lockfile is upgraded whole, so the packages left as they are need their version found.
  const upgrades = upgradeJobs(loaded.v1, (name) => chosen.includes(name));
  const rows = await compareWithRegistry(ctx, loaded, chosen);
  const sites = await compareSites(
    ctx,
    loaded.lock,
    named ? [...new Set(siteKeys)] : installed.map((site) => site.key),
  );
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
  // A site skill whose index lists another digest now: its new artifact, checked against that digest
  // (exit 5 on a mismatch), and its folders, before anything is written.
  const siteChanges = new Map<SiteJob, string>();
  for (const site of sites) {
    if (site.state !== 'outdated' || !site.latest) continue;
    const job = siteUpdateJob(site);
    siteChanges.set(
      job,
      `updated ${siteLabel(site.entry.source)} ${shortDigest(site.entry.digest)} -> ${shortDigest(site.latest.entry.digest)}`,
    );
  }
  const siteJobs = [...siteChanges.keys()];
  for (const job of siteJobs) {
    await prepareSiteJob(ctx, target, job, {
      force: input.force,
      mismatchHint: 'the index lists',
      modifiedHint: 'use --force to overwrite',
      note: (line) => silentProgress().note(line),
    });
  }
  // A new version may need what is not installed yet, or other versions of it (README: Dependencies).
  const needed = await dependencyJobs(
    ctx,
    target,
    loaded.lock,
    { packages: [...changes.keys()], sites: siteNeeds(siteJobs) },
    { allowRisk: input.allowRisk, frozen: false, progress: silentProgress() },
  );
  jobs.push(...needed.keys());
  const progress = progressFor(jobs.length);
  try {
    // Packages and site skills are written together: all or none.
    const results = await applyJobs(ctx, target, jobs, {
      force: input.force,
      modifiedHint: 'use --force to overwrite',
      progress,
      lockedDirs: lockedDirs(loaded.lock),
      verify: input.verify,
      alsoWrite: siteFolders(siteJobs),
    });
    progress.done();
    for (const { job } of results) {
      const line = changes.get(job);
      if (line) ctx.out(line);
    }
    for (const line of siteChanges.values()) ctx.out(line);
    for (const line of dependencyLines(target, results, needed)) ctx.out(line);
  } finally {
    progress.done();
  }
  if (jobs.length || siteJobs.length) {
    for (const job of jobs) loaded.lock.packages[job.ref.full] = job.entry;
    if (siteJobs.length)
      loaded.lock.sites = {
        ...loaded.lock.sites,
        ...Object.fromEntries(siteJobs.map((job) => [job.key, job.entry])),
      };
    linkDependants(loaded.lock);
    await writeLockfile(target.lockPath, loaded.lock);
    if (loaded.v1.size) upgradedNote(ctx);
    // A site skill's new SKILL.md may no longer need what it did, as a re-install from its site says.
    if (siteJobs.length) warnOrphans(loaded.lock, (line) => ctx.warn(line));
  }
  for (const row of rows) {
    if (row.state === 'removed') ctx.warn(`${row.name} is no longer in the registry; kept as installed`);
  }
  for (const site of sites) {
    if (site.state === 'removed')
      ctx.warn(
        `${siteLabel(site.entry.source)} is no longer listed by ${site.entry.source.url}; kept as installed`,
      );
  }
  warnUnchecked(ctx, sites);
  const unchecked = uncheckedError(sites);
  if (changes.size === 0 && siteJobs.length === 0 && !unchecked)
    ctx.out(sites.length ? 'All packages and site skills are up to date.' : 'All packages are up to date.');
  if (unchecked) throw unchecked;
}
