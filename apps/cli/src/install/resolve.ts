import { posix } from 'node:path';
import type { PackageDetail, VersionDependency, VersionDetail, VersionSummary } from '@pkgreg/contracts';
import semverSatisfies from 'semver/functions/satisfies.js';
import type { Context } from '../context.js';
import { CliError, EXIT } from '../errors.js';
import {
  isDirect,
  LOCKFILE_NAME,
  type LockEntry,
  type Lockfile,
  lockedFilesOf,
  type Requirer,
  requirersOf,
  sameFiles,
} from '../lockfile/lockfile.js';
import { type PackageRef, parsePackageArg } from '../names.js';
import type { Progress } from '../progress.js';
import { checkVersionRisk, refuseQuarantined, yankedNote } from '../risk.js';
import { choosable, listVersions, maxSatisfying } from '../versions.js';

// Skill dependencies at install (README: Dependencies). Breadth-first from the packages named, one
// version per package: the first package to need one chooses it (its locked version when that fits,
// else the highest version every range known for it allows, yanked ones never), and every later need
// must be met by that version. When it is not, the need is learned and resolution starts again, so a
// version all of them accept is found when one exists; otherwise it is a conflict naming both sides.
// A cycle is refused: a skill cannot be installed before what it needs.

const RANGE_OPTIONS = { includePrerelease: true } as const;
/** Each restart learns one range; past this many the graph is not worth more requests. */
const MAX_ATTEMPTS = 32;

/** A package in the resolution: named by you (a root) or needed by one that is. */
export interface GraphNode {
  ref: PackageRef;
  version: VersionDetail;
  /** What its lockfile entry records of the source. */
  source: { sourceRepo: string; sourcePath: string };
  /** Named on the command line (its version is yours to choose, never moved by a dependency). */
  root: boolean;
  /** The packages of this resolution whose chosen version needs it, in the order they were met. */
  requiredBy: string[];
}

export interface ResolveOptions {
  lock: Lockfile;
  /** --frozen: every dependency must be locked, at a version its ranges allow. */
  frozen: boolean;
  allowRisk: boolean;
  progress: Progress;
  /** Packages whose locked version is not preferred (`update` moves them). */
  fresh?: ReadonlySet<string>;
  /**
   * Site skills being installed or updated (docs/discovery.md), by their `sites` key, with what their
   * SKILL.md declares: no packages themselves, they need registry packages as a root does.
   */
  sites?: readonly { key: string; dependencies: readonly VersionDependency[] }[];
}

/** One range a package must satisfy, and who asks for it. */
interface Need {
  range: string | null;
  /** `@scope/name@version` of the requirer, or what in the lockfile asks. */
  by: string;
}

/** The manifest of a locked version, refused when it differs from what the lockfile recorded. */
export async function lockedVersion(ctx: Context, entry: LockEntry): Promise<VersionDetail> {
  const ref = parsePackageArg(entry.name);
  const version = await ctx.client.version(ref.scope, ref.name, entry.version);
  if (version.integrity !== entry.integrity || !sameFiles(lockedFilesOf(version), entry.files)) {
    throw new CliError(
      EXIT.integrity,
      `Integrity mismatch: the registry serves ${ref.full}@${entry.version} with other files than ${LOCKFILE_NAME} records`,
    );
  }
  return version;
}

/** A null range asks for the latest: any version meets it. */
export function fits(version: string, range: string | null): boolean {
  return range === null || semverSatisfies(version, range, RANGE_OPTIONS);
}

const labelOf = (node: { ref: PackageRef; version: { version: string } }) =>
  `${node.ref.full}@${node.version.version}`;
const shownRange = (range: string | null) => range ?? 'its latest version';

/** What the registry said, kept across restarts so no request is made twice. */
class RegistryMemo {
  private readonly details = new Map<string, Promise<PackageDetail>>();
  private readonly lists = new Map<string, Promise<VersionSummary[]>>();
  private readonly versions = new Map<string, Promise<VersionDetail>>();

  constructor(private readonly ctx: Context) {}

  detail(ref: PackageRef): Promise<PackageDetail> {
    return this.once(this.details, ref.full, () => this.ctx.client.detail(ref.scope, ref.name));
  }

  list(ref: PackageRef): Promise<VersionSummary[]> {
    return this.once(this.lists, ref.full, () => listVersions(this.ctx, ref));
  }

  version(ref: PackageRef, version: string, load?: () => Promise<VersionDetail>): Promise<VersionDetail> {
    return this.once(
      this.versions,
      `${ref.full}@${version}`,
      load ?? (() => this.ctx.client.version(ref.scope, ref.name, version)),
    );
  }

  private once<T>(cache: Map<string, Promise<T>>, key: string, load: () => Promise<T>): Promise<T> {
    let value = cache.get(key);
    if (!value) {
      value = load();
      cache.set(key, value);
      // A failure is not remembered: the error reaches the caller once, and a restart asks again.
      value.catch(() => cache.delete(key));
    }
    return value;
  }
}

/** Thrown inside an attempt: resolve again with `need` known for `name` from the start. */
class Learned {
  constructor(
    readonly name: string,
    readonly need: Need,
  ) {}
}

function conflictError(name: string, needs: readonly Need[], chosen?: string): CliError {
  const [first, second] = needs;
  const parts = needs.map((n) => `${shownRange(n.range)} by ${n.by}`);
  const pair =
    first && second && needs.length === 2
      ? `${name} is needed at ${shownRange(first.range)} by ${first.by} and at ${shownRange(second.range)} by ${second.by}`
      : `${name} is needed at ${parts.join(', at ')}`;
  const tail = chosen
    ? `, and ${chosen} does not satisfy both`
    : ', and no version of it satisfies them all (one version of a package is installed)';
  return new CliError(EXIT.error, `Dependency conflict: ${pair}${tail}`);
}

/** The two needs no single version meets (or all of them when no pair is to blame). */
function conflictingNeeds(versions: readonly string[], needs: readonly Need[]): Need[] {
  for (let i = 0; i < needs.length; i++) {
    for (let j = i + 1; j < needs.length; j++) {
      const a = needs[i] as Need;
      const b = needs[j] as Need;
      if (!versions.some((v) => fits(v, a.range) && fits(v, b.range))) return [a, b];
    }
  }
  return [...needs];
}

/**
 * The lockfile's packages and site skills left as they are by this resolution (not in `resolving`):
 * what they need must still be met.
 */
function lockedRequirers(lock: Lockfile, resolving: (key: string) => boolean): Requirer[] {
  return requirersOf(lock).filter((requirer) => !resolving(requirer.key));
}

/**
 * The lockfile's asks for `name` from packages and site skills not (yet) in this resolution: their
 * ranges, your range.
 */
function lockedNeeds(lock: Lockfile, name: string, resolving: (key: string) => boolean): Need[] {
  const needs: Need[] = [];
  for (const requirer of lockedRequirers(lock, resolving)) {
    if (name in requirer.dependencies)
      needs.push({
        range: requirer.dependencies[name] ?? null,
        by: `${requirer.label} (${LOCKFILE_NAME})`,
      });
  }
  const own = lock.packages[name];
  if (own && isDirect(own) && own.requested !== null)
    needs.push({
      range: own.requested,
      by: `your ${LOCKFILE_NAME} (you asked for ${name}@${own.requested})`,
    });
  return needs;
}

/**
 * Every package the roots need, transitively: the roots first, then their dependencies breadth-first.
 * Throws exit 1 for a conflict or a cycle, exit 3 for a dependency the registry lacks, exit 5 when
 * --frozen would have to change the lockfile, exit 7 for one refused for risk.
 */
export async function resolveDependencies(
  ctx: Context,
  roots: readonly GraphNode[],
  options: ResolveOptions,
): Promise<GraphNode[]> {
  const memo = new RegistryMemo(ctx);
  const learned = new Map<string, Need[]>();
  for (let attempt = 1; ; attempt++) {
    try {
      const nodes = await attemptResolve(ctx, memo, roots, options, learned);
      refuseCycles(nodes);
      return nodes;
    } catch (error) {
      if (!(error instanceof Learned)) throw error;
      if (attempt >= MAX_ATTEMPTS)
        throw new CliError(
          EXIT.error,
          `Dependency conflict: no versions found that satisfy every range of ${error.name}`,
        );
      const needs = learned.get(error.name) ?? [];
      needs.push(error.need);
      learned.set(error.name, needs);
      ctx.debug(
        `resolving again: ${error.name} must also satisfy ${shownRange(error.need.range)} (${error.need.by})`,
      );
    }
  }
}

async function attemptResolve(
  ctx: Context,
  memo: RegistryMemo,
  roots: readonly GraphNode[],
  options: ResolveOptions,
  learned: ReadonlyMap<string, Need[]>,
): Promise<GraphNode[]> {
  const { lock, frozen } = options;
  const nodes = new Map<string, GraphNode>();
  for (const root of roots) nodes.set(root.ref.full, { ...root, requiredBy: [] });
  const sites = new Set((options.sites ?? []).map((site) => site.key));
  const resolving = (key: string) => nodes.has(key) || sites.has(key);
  const queue = [...nodes.values()];
  /** Each dependency of `from` chosen (or checked against the version already chosen). */
  const visit = async (from: { key: string; label: string; dependencies: readonly VersionDependency[] }) => {
    for (const dependency of from.dependencies) {
      const need: Need = { range: dependency.range, by: from.label };
      const known = nodes.get(dependency.name);
      if (known) {
        if (!known.requiredBy.includes(from.key)) known.requiredBy.push(from.key);
        if (fits(known.version.version, dependency.range)) continue;
        if (known.root) {
          throw new CliError(
            EXIT.error,
            `Dependency conflict: ${from.label} needs ${dependency.name}@${shownRange(dependency.range)}, but you asked for ${labelOf(known)}`,
          );
        }
        if (frozen) throw frozenMismatch(dependency.name, known.version.version, need);
        throw new Learned(dependency.name, need);
      }
      const ref = parsePackageArg(dependency.name);
      const wanted = [
        need,
        ...(learned.get(dependency.name) ?? []),
        ...lockedNeeds(lock, ref.full, resolving),
      ];
      options.progress.status(`resolving ${ref.full} (needed by ${from.key})`);
      const chosen = await chooseVersion(ctx, memo, ref, wanted, need, options);
      const next: GraphNode = {
        ref,
        version: chosen.version,
        source: chosen.source,
        root: false,
        requiredBy: [from.key],
      };
      // A version kept from the lockfile is asked about again, as a restore is (issue 26): it may have
      // been yanked or scanned since, or installed with --allow-risk by someone else.
      const note = (line: string) => options.progress.note(line);
      if (next.version.yanked)
        note(yankedNote(`${ref.full}@${next.version.version}`, next.version.yankReason));
      checkVersionRisk(ref.full, next.version, options.allowRisk, note);
      nodes.set(ref.full, next);
      queue.push(next);
    }
  };
  // Site skills are no packages: what they need is met first, as a root's would be.
  for (const site of options.sites ?? []) await visit({ ...site, label: site.key });
  for (let node = queue.shift(); node; node = queue.shift())
    await visit({ key: node.ref.full, label: labelOf(node), dependencies: node.version.dependencies });
  // Packages and site skills of the lockfile left as they are must still get what they ask for.
  for (const requirer of lockedRequirers(lock, resolving)) {
    for (const [name, range] of Object.entries(requirer.dependencies)) {
      const node = nodes.get(name);
      if (!node || fits(node.version.version, range)) continue;
      const need: Need = { range, by: `${requirer.label} (${LOCKFILE_NAME})` };
      if (node.root) {
        throw new CliError(
          EXIT.error,
          `Dependency conflict: ${need.by} needs ${name}@${shownRange(range)}, but you asked for ${labelOf(node)}; update or remove ${requirer.key} first`,
        );
      }
      if (frozen) throw frozenMismatch(name, node.version.version, need);
      throw new Learned(name, need);
    }
  }
  return [...nodes.values()];
}

function frozenMismatch(name: string, locked: string, need: Need): CliError {
  return new CliError(
    EXIT.integrity,
    `--frozen: ${name} is locked at ${locked}, which ${need.by} does not accept (${shownRange(need.range)})`,
  );
}

/** The version a newly met dependency gets, with its package's detail (status, source). */
async function chooseVersion(
  ctx: Context,
  memo: RegistryMemo,
  ref: PackageRef,
  wanted: readonly Need[],
  first: Need,
  options: ResolveOptions,
): Promise<{
  version: VersionDetail;
  source: { sourceRepo: string; sourcePath: string };
}> {
  const locked = options.lock.packages[ref.full];
  const neededBy = `needed by ${first.by}`;
  if (options.frozen) {
    if (!locked)
      throw new CliError(EXIT.integrity, `--frozen: ${ref.full} (${neededBy}) is not in ${LOCKFILE_NAME}`);
    const refused = wanted.find((need) => !fits(locked.version, need.range));
    if (refused) throw frozenMismatch(ref.full, locked.version, refused);
  }
  // Asked with --frozen too: a locked dependency passes the gates a named package does (issue 26).
  const pkg = await withNeed(memo.detail(ref), neededBy);
  if (pkg.status === 'delisted')
    throw new CliError(EXIT.notFound, `${ref.full}: Package not found (${neededBy})`);
  refuseQuarantined(`${ref.full} (${neededBy})`, pkg.status, pkg.quarantineReason);
  if (pkg.status === 'deprecated') {
    const why = pkg.deprecationMessage ? `: ${pkg.deprecationMessage}` : '';
    options.progress.note(`warning: ${ref.full} (${neededBy}) is deprecated${why}`);
  }
  if (options.frozen && locked) {
    const version = await memo.version(ref, locked.version, () => lockedVersion(ctx, locked));
    return { version, source: locked };
  }
  // The locked version stays while every range allows it (a dependency moves only when it must).
  if (locked && !options.fresh?.has(ref.full) && wanted.every((need) => fits(locked.version, need.range))) {
    const version = await memo.version(ref, locked.version, () => lockedVersion(ctx, locked));
    return { version, source: pkg };
  }
  const all = await withNeed(memo.list(ref), neededBy);
  const open = choosable(all).map((v) => v.version);
  const ranges = wanted.filter((need) => need.range !== null);
  let found: string | null;
  if (ranges.length === 0) {
    // Only "the latest": the newest version not yanked (the list is newest first).
    found = open[0] ?? null;
  } else {
    const allowed = open.filter((v) => wanted.every((need) => fits(v, need.range)));
    found = maxSatisfying(allowed, '*');
  }
  if (found === null) {
    if (!open.some((v) => fits(v, first.range))) {
      const yanked = all.length - open.length;
      const note = yanked > 0 ? `; ${yanked} yanked` : '';
      throw new CliError(
        EXIT.notFound,
        `No version of ${ref.full} matches ${shownRange(first.range)} (${neededBy}; ${all.length} version${all.length === 1 ? '' : 's'}${note})`,
      );
    }
    throw conflictError(ref.full, conflictingNeeds(open, wanted));
  }
  return { version: await memo.version(ref, found), source: pkg };
}

/** A dependency's 404 (its message names the package) says who needed it. */
async function withNeed<T>(value: Promise<T>, neededBy: string): Promise<T> {
  try {
    return await value;
  } catch (error) {
    if (error instanceof CliError && error.exitCode === EXIT.notFound)
      throw new CliError(EXIT.notFound, `${error.message} (${neededBy})`, error.detail);
    throw error;
  }
}

/**
 * The folders of a dependency: where it is locked, plus beside each folder of every package here that
 * needs it (`<skills folder>/<its name>`), so each agent that reads a skill finds what it needs.
 */
export function dependencyFolders(
  nodes: readonly GraphNode[],
  lock: Lockfile,
  rootFolders: ReadonlyMap<string, { dirs: string[]; agents: string[] }>,
  frozen: boolean,
): Map<string, { dirs: string[]; agents: string[] }> {
  const placed = new Map(rootFolders);
  for (const node of nodes) {
    if (node.root) continue;
    const locked = lock.packages[node.ref.full];
    placed.set(node.ref.full, { dirs: [...(locked?.dirs ?? [])], agents: [...(locked?.agents ?? [])] });
  }
  if (frozen) return placed;
  // Requirers may come after what they need in breadth-first order (a later one adds a need): repeat
  // until nothing moves. Each pass only adds, and there are finitely many folders.
  for (let changed = true; changed; ) {
    changed = false;
    for (const node of nodes) {
      if (node.root) continue;
      const own = placed.get(node.ref.full) as { dirs: string[]; agents: string[] };
      for (const requirer of node.requiredBy) {
        const from = placed.get(requirer);
        if (!from) continue;
        for (const dir of from.dirs) {
          const beside = posix.join(posix.dirname(dir), node.ref.name);
          if (!own.dirs.includes(beside)) {
            own.dirs.push(beside);
            changed = true;
          }
        }
        for (const agent of from.agents) if (!own.agents.includes(agent)) own.agents.push(agent);
      }
    }
  }
  return placed;
}

/** Refuses a cycle among the chosen versions, naming it: `@a/x@1.0.0 -> @b/y@2.0.0 -> @a/x@1.0.0`. */
export function refuseCycles(nodes: readonly GraphNode[]): void {
  const byName = new Map(nodes.map((node) => [node.ref.full, node]));
  const state = new Map<string, 'open' | 'done'>();
  const path: GraphNode[] = [];
  const visit = (node: GraphNode): GraphNode[] | undefined => {
    state.set(node.ref.full, 'open');
    path.push(node);
    for (const dependency of node.version.dependencies) {
      const next = byName.get(dependency.name);
      if (!next) continue;
      if (state.get(next.ref.full) === 'open') return [...path.slice(path.indexOf(next)), next];
      if (!state.has(next.ref.full)) {
        const cycle = visit(next);
        if (cycle) return cycle;
      }
    }
    path.pop();
    state.set(node.ref.full, 'done');
    return undefined;
  };
  for (const node of nodes) {
    if (state.has(node.ref.full)) continue;
    const cycle = visit(node);
    if (cycle) {
      throw new CliError(
        EXIT.error,
        `Dependency cycle: ${cycle.map(labelOf).join(' -> ')}; skills that need each other cannot be installed (ask their authors to break the cycle)`,
      );
    }
  }
}
