import type { VersionDetail, VersionSummary } from '@pkgreg/contracts';
import semverSatisfies from 'semver/functions/satisfies.js';
import semverMaxSatisfying from 'semver/ranges/max-satisfying.js';
import type { Context } from './context.js';
import { CliError, EXIT } from './errors.js';
import type { PackageRef, VersionSpec } from './names.js';

// Resolving what a name asks for to one immutable version (docs/versions.md: API, ranges).

const PAGE_SIZE = 100;
// Ranges include pre-releases: a pseudo-version of 1.2.x is the author's change to 1.2 (docs/versions.md).
const RANGE_OPTIONS = { includePrerelease: true } as const;

/** Every version of a package, newest first (all pages). */
export async function listVersions(ctx: Context, ref: PackageRef): Promise<VersionSummary[]> {
  const all: VersionSummary[] = [];
  for (let page = 1; ; page++) {
    const response = await ctx.client.versions(ref.scope, ref.name, page, PAGE_SIZE);
    all.push(...response.data);
    if (response.data.length === 0 || all.length >= response.total) return all;
  }
}

/** The highest version satisfying a range, or null. */
export function maxSatisfying(versions: readonly string[], range: string): string | null {
  return semverMaxSatisfying([...versions], range, RANGE_OPTIONS);
}

/** The versions a range or `latest` may choose: the owner's yanked ones are for exact pins only. */
export function choosable(versions: readonly VersionSummary[]): VersionSummary[] {
  return versions.filter((v) => !v.yanked);
}

function noMatch(ref: PackageRef, range: string, versions: readonly VersionSummary[]): CliError {
  if (versions.length === 0) {
    return new CliError(
      EXIT.notFound,
      `${ref.full} has no versions yet (indexed before versions existed; it gets one at its next indexing run)`,
    );
  }
  const open = choosable(versions);
  const yanked = versions.length - open.length;
  const note = yanked > 0 ? `; ${yanked} yanked, installable only by exact version` : '';
  return new CliError(
    EXIT.notFound,
    `No version of ${ref.full} matches ${range} (latest is ${open[0]?.version ?? 'none'}; ${versions.length} version${versions.length === 1 ? '' : 's'}${note})`,
  );
}

/** The manifest of the version a spec names: latest, an exact version, or the highest in a range. */
export async function resolveVersion(
  ctx: Context,
  ref: PackageRef,
  spec: VersionSpec,
): Promise<VersionDetail> {
  if (spec.kind === 'latest') {
    try {
      return await ctx.client.version(ref.scope, ref.name, 'latest');
    } catch (error) {
      // A package indexed before versions existed has none until its next indexing run.
      if (error instanceof CliError && error.exitCode === EXIT.notFound) {
        const first = await ctx.client.versions(ref.scope, ref.name, 1, 1).catch(() => undefined);
        if (first?.total === 0) throw noMatch(ref, 'latest', []);
      }
      throw error;
    }
  }
  if (spec.kind === 'exact') return ctx.client.version(ref.scope, ref.name, spec.version);
  const versions = await listVersions(ctx, ref);
  const found = maxSatisfying(
    choosable(versions).map((v) => v.version),
    spec.range,
  );
  if (found === null) throw noMatch(ref, spec.range, versions);
  return ctx.client.version(ref.scope, ref.name, found);
}

export interface Candidates {
  /** The newest version (by creation), or null when there is none. */
  latest: string | null;
  /** The version `requested` resolves to now (the latest when null), or null when none matches. */
  wanted: string | null;
}

/**
 * What a locked package could move to, for outdated and update. `needed` are the ranges the locked
 * packages that depend on it declare: `wanted` stays within them too (README: Dependencies).
 */
export async function candidatesFor(
  ctx: Context,
  ref: PackageRef,
  requested: string | null,
  needed: readonly string[] = [],
): Promise<Candidates> {
  // Newest first: the first page almost always holds the newest version not yanked.
  const first = await ctx.client.versions(ref.scope, ref.name, 1, PAGE_SIZE);
  const versions = choosable(first.data.length < first.total ? await listVersions(ctx, ref) : first.data);
  const latest = versions[0]?.version ?? null;
  if (requested === null && needed.length === 0) return { latest, wanted: latest };
  const allowed = versions
    .map((v) => v.version)
    .filter((v) => needed.every((range) => semverSatisfies(v, range, RANGE_OPTIONS)));
  return { latest, wanted: maxSatisfying(allowed, requested ?? '*') };
}
