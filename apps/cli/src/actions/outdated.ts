import type { PackageDetail } from '@pkgreg/contracts';
import type { Command } from 'commander';
import type { OutdatedOptions } from '../commands/outdated.js';
import { type Context, createContext } from '../context.js';
import { CliError, EXIT } from '../errors.js';
import type { SiteRow } from '../install/site-update.js';
import { type InstallTarget, installTarget } from '../install/targets.js';
import { LOCKFILE_NAME, type LockEntry, requirersOf, shortDigest, siteLabel } from '../lockfile/lockfile.js';
import { type LoadedLock, readLock } from '../lockfile/read.js';
import type { V1Entry } from '../lockfile/v1.js';
import { parsePackageArg } from '../names.js';
import { table, terminalWidth } from '../output.js';
import { silentProgress } from '../progress.js';
import { candidatesFor } from '../versions.js';

export type OutdatedState = 'current' | 'outdated' | 'removed';

export interface OutdatedRow {
  name: string;
  /** The locked entry (null for a lockfileVersion 1 entry no version matches). */
  entry: LockEntry | null;
  /** The v1 entry behind this row, when the lockfile is version 1. */
  v1: V1Entry | undefined;
  /** The installed version (null when unknown: a v1 entry no version matches). */
  current: string | null;
  requested: string | null;
  /** What `requested` resolves to now. */
  wanted: string | null;
  latest: string | null;
  /** Null when the registry no longer has the package. */
  pkg: PackageDetail | null;
  state: OutdatedState;
}

/** The lockfile, which must exist (exit 1 otherwise), with v1 entries read against the registry. */
export async function requireLock(ctx: Context, target: InstallTarget): Promise<LoadedLock> {
  const loaded = await readLock(ctx, target, { frozen: false, progress: silentProgress() });
  if (!loaded.existed) {
    throw new CliError(EXIT.error, `No ${LOCKFILE_NAME} at ${target.lockPath}; nothing is installed here`);
  }
  return loaded;
}

/** Every locked package, by name, whichever lockfile version listed it. */
export function lockedNames(loaded: LoadedLock): string[] {
  return [...new Set([...Object.keys(loaded.lock.packages), ...loaded.v1.keys()])].sort();
}

/** Compares each locked version with what its requested range (or the latest) resolves to now. */
export async function compareWithRegistry(
  ctx: Context,
  loaded: LoadedLock,
  names: readonly string[],
): Promise<OutdatedRow[]> {
  const rows: OutdatedRow[] = [];
  for (const name of names) {
    const ref = parsePackageArg(name);
    const entry = loaded.lock.packages[name] ?? null;
    const v1 = loaded.v1.get(name);
    const current = entry?.version ?? null;
    const requested = entry?.requested ?? null;
    let pkg: PackageDetail | null;
    try {
      pkg = await ctx.client.detail(ref.scope, ref.name);
    } catch (error) {
      if (error instanceof CliError && error.exitCode === EXIT.notFound) pkg = null;
      else throw error;
    }
    if (pkg?.status === 'delisted') pkg = null;
    if (pkg === null) {
      rows.push({
        name,
        entry,
        v1,
        current,
        requested,
        wanted: null,
        latest: null,
        pkg,
        state: 'removed',
      });
      continue;
    }
    // The ranges of the locked packages and site skills that need it: an update never breaks one.
    const needed = requirersOf(loaded.lock)
      .map((other) => other.dependencies[name])
      .filter((range): range is string => typeof range === 'string');
    const { wanted, latest } = await candidatesFor(ctx, ref, requested, needed);
    const state: OutdatedState = wanted !== null && wanted !== current ? 'outdated' : 'current';
    rows.push({ name, entry, v1, current, requested, wanted, latest, pkg, state });
  }
  return rows;
}

/** Says, one warning each, which site skills could not be checked and why. */
export function warnUnchecked(ctx: Context, sites: readonly SiteRow[]): void {
  for (const site of sites) {
    if (site.state === 'unreachable')
      ctx.warn(`${siteLabel(site.entry.source)} could not be checked: ${site.error?.message}`);
  }
}

/**
 * The error that ends a run which could not check some site skills, after its output: the exit code of
 * the first failure (4 for a site that did not answer, as for the registry); undefined when none failed.
 */
export function uncheckedError(sites: readonly SiteRow[]): CliError | undefined {
  const failed = sites.filter((site) => site.state === 'unreachable');
  const first = failed[0];
  if (!first) return undefined;
  const names = failed.map((site) => siteLabel(site.entry.source)).join(', ');
  return new CliError(
    first.error?.exitCode ?? EXIT.unavailable,
    `${failed.length} site skill${failed.length === 1 ? '' : 's'} could not be checked: ${names}`,
  );
}

export async function outdated(input: OutdatedOptions, command: Command): Promise<void> {
  const ctx = await createContext(command);
  const loaded = await requireLock(ctx, installTarget(ctx, input.global));
  const rows = await compareWithRegistry(ctx, loaded, lockedNames(loaded));
  // Site skills against their sites' indexes (docs/discovery.md); none: no request, nothing loaded.
  const siteKeys = Object.keys(loaded.lock.sites ?? {});
  const sites = siteKeys.length
    ? await (await import('../install/site-update.js')).compareSites(ctx, loaded.lock, siteKeys)
    : [];
  for (const row of rows) {
    if (row.v1 && !row.entry) {
      ctx.warn(
        `${row.name}: no version holds the SKILL.md ${LOCKFILE_NAME} (lockfileVersion 1) locked; "pkgreg update ${row.name}" installs ${row.wanted ?? 'its latest version'}`,
      );
    }
  }
  // A site that could not be read is a row and a warning; the run ends with its error's exit code.
  warnUnchecked(ctx, sites);
  const unchecked = uncheckedError(sites);
  if (input.json) {
    const json: Record<string, unknown>[] = rows.map((row) => ({
      name: row.name,
      current: row.current,
      requested: row.requested,
      wanted: row.wanted,
      latest: row.latest,
      state: row.state,
      status: row.pkg?.status ?? null,
    }));
    // Site skills (docs/discovery.md): digests where packages have versions, and where they come from.
    for (const site of sites) {
      const latest = site.latest?.entry.digest ?? null;
      json.push({
        name: site.entry.source.skill,
        source: site.entry.source,
        current: site.entry.digest,
        requested: null,
        wanted: latest,
        latest,
        state: site.state,
        status: null,
        ...(site.error ? { error: site.error.message } : {}),
      });
    }
    ctx.json(json);
    if (unchecked) throw unchecked;
    return;
  }
  if (rows.length === 0 && sites.length === 0) {
    ctx.out(`No packages in ${LOCKFILE_NAME}.`);
    return;
  }
  const shown = (digest: string | undefined) => (digest ? shortDigest(digest) : '-');
  const lines = table(
    [
      { header: 'NAME' },
      { header: 'CURRENT' },
      { header: 'WANTED' },
      { header: 'LATEST' },
      { header: 'STATE' },
    ],
    [
      ...rows.map((row) => [
        row.name,
        row.current ?? '?',
        row.requested === null ? (row.wanted ?? '-') : `${row.wanted ?? '-'} (${row.requested})`,
        row.latest ?? '-',
        row.pkg?.status === 'deprecated' ? `${row.state} (deprecated)` : row.state,
      ]),
      // A site skill has no versions or ranges: the digest its index lists now is what update installs.
      ...sites.map((site) => [
        siteLabel(site.entry.source),
        shown(site.entry.digest),
        shown(site.latest?.entry.digest),
        shown(site.latest?.entry.digest),
        site.state,
      ]),
    ],
    terminalWidth(),
  );
  for (const line of lines) ctx.out(line);
  const packages = rows.filter((row) => row.state === 'outdated').length;
  const skills = sites.filter((site) => site.state === 'outdated').length;
  const counted = [
    ...(packages ? [`${packages} package${packages === 1 ? '' : 's'}`] : []),
    ...(skills ? [`${skills} site skill${skills === 1 ? '' : 's'}`] : []),
  ];
  if (counted.length > 0) ctx.out(`${counted.join(' and ')} can be updated with "pkgreg update".`);
  else if (!unchecked)
    ctx.out(sites.length ? 'All packages and site skills are up to date.' : 'All packages are up to date.');
  if (unchecked) throw unchecked;
}
