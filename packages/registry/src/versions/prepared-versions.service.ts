import type { SkillResult } from '@pkgreg/contracts';
import type { Db } from '@pkgreg/db';
import type { ScanResult } from '@pkgreg/scan';
import { type DeclaredDependency, unknownDependencyWarning } from '../dependencies/declared-dependencies.js';
import {
  insertDependencies,
  lockDependencyGraph,
  refreshDependencyState,
  versionsWithoutDependencies,
  visiblePackageKeys,
} from '../dependencies/dependencies.repository.js';
import type { DerivedPackage, IndexedPackage } from '../packages/package-values.js';
import {
  delistPackages,
  findPackage,
  insertPackage,
  packagesOfRepo,
  rowMatches,
  setVerified,
  updatePackage,
} from '../packages/packages.repository.js';
import { chooseVersion, type ManifestFile } from './versioning.js';
import { insertVersion, versionHistories } from './versions.repository.js';

// Writing what a source prepared (docs/versions.md): one repository's package rows and their new
// immutable versions, in the caller's transaction. The indexer reads the source and prepares each
// folder; what becomes a version, under which version string, and what is delisted is decided here.

/** A folder whose SKILL.md passed the rules: what the package row and a new version need. */
export interface PreparedVersion {
  /** Path of the SKILL.md in the repository. */
  path: string;
  pkg: DerivedPackage;
  /** The resolved SPDX license (declared, else from LICENSE files, else the host's), or null. */
  license: string | null;
  manifest: ManifestFile[];
  digest: string;
  totalBytes: number;
  /** The SKILL.md's warnings and the folder's (links left out). */
  warnings: string[];
  /** Set when the digest differs from the package's latest version: the archive is stored. */
  archive: { sha256: string; integrity: string } | null;
  /** The risk scan of the new version (set with `archive`): stored in the same transaction as it. */
  scan: ScanResult | null;
}

/** What a run did to the repository's packages. */
export interface RunCounts {
  indexed: number;
  updated: number;
  unchanged: number;
  delisted: number;
  rejected: number;
}

export interface Rejection {
  /** Path of the SKILL.md in the repository. */
  path: string;
  reason: string;
}

/** A version a run created. */
export interface NewVersionSummary {
  /** `@scope/name`. */
  name: string;
  version: string;
}

export const ZERO_COUNTS: RunCounts = { indexed: 0, updated: 0, unchanged: 0, delisted: 0, rejected: 0 };

/** The SKILL.md path of a package at `sourcePath`. */
export const skillMdPath = (sourcePath: string) => (sourcePath ? `${sourcePath}/SKILL.md` : 'SKILL.md');

export interface WriteInput {
  names: string[];
  prepared: PreparedVersion[];
  /** Appended to: duplicates, collisions, operator removals. */
  rejections: Rejection[];
  snapshotCommit: string | null;
  /**
   * The snapshot commit's committer date: with `snapshotCommit`, it names pseudo-versions (Go's form).
   * Absent or null (an upload, a publish that names a commit but not its time), the run's time and the
   * digest name them.
   */
  snapshotCommitTime?: Date | null;
  truncated: boolean;
  /** The indexing run writing them (null for an upload): links a version to the publish that asked. */
  indexingRunId?: string | null;
  /** A publish or signed webhook: what it writes or confirms is `verified`. */
  proven: boolean;
}

/** The run's package rows and new versions, in one transaction: a failure leaves none of them. */
export async function writePreparedVersions(
  trx: Db,
  input: WriteInput,
): Promise<{ counts: RunCounts; versions: NewVersionSummary[]; skills: SkillResult[] }> {
  const { prepared, rejections } = input;
  const now = new Date();
  const commit =
    input.snapshotCommit && input.snapshotCommitTime
      ? { hash: input.snapshotCommit, time: input.snapshotCommitTime }
      : null;
  // First, before any package row is locked (dependencies.repository.ts says why).
  await lockDependencyGraph(trx);
  await warnUnknownDependencies(trx, prepared);
  const rows = await packagesOfRepo(trx, input.names);
  const byName = new Map(rows.map((r) => [`${r.scope}/${r.name}`, r]));
  const histories = await versionHistories(
    trx,
    rows.map((r) => r.id),
  );
  const counts: RunCounts = { ...ZERO_COUNTS };
  const versions: NewVersionSummary[] = [];
  const skills: SkillResult[] = [];
  const claimedBy = new Map<string, string>();
  const kept = new Set<string>();
  const created = new Set<string>();
  /** Relisted packages: their dependants may resolve again. */
  const relisted = new Set<string>();
  /** Latest versions created before dependencies were recorded, with what their SKILL.md declares. */
  const unrecorded: Array<{ versionId: string; dependencies: DeclaredDependency[] }> = [];
  const reject = (path: string, key: string, reason: string) => {
    rejections.push({ path, reason });
    skills.push({ path, name: `@${key}`, outcome: 'rejected', version: null, warnings: [], reason });
  };
  for (const skill of prepared) {
    const { pkg } = skill;
    const key = `${pkg.scope}/${pkg.name}`;
    const earlier = claimedBy.get(key);
    if (earlier) {
      reject(skill.path, key, `duplicate name "${pkg.name}": also defined by ${earlier}`);
      continue;
    }
    const row = byName.get(key);
    if (row?.removed_at) {
      claimedBy.set(key, skill.path);
      kept.add(row.id);
      reject(skill.path, key, `@${key} was removed by the registry operator`);
      continue;
    }
    const history = row ? histories.get(row.id) : undefined;
    const changed = history?.latestDigest !== skill.digest;
    const version = changed
      ? chooseVersion({
          declared: pkg.declaredVersion,
          used: history?.used ?? new Set(),
          lastDeclared: history?.lastDeclared ?? null,
          commit,
          time: now,
          digest: skill.digest,
        })
      : (history?.latestListed ?? null);
    // The owner's deprecation outlives runs; the SKILL.md's own `metadata.status` can only add to it.
    const status = row?.deprecated_at && pkg.status === 'active' ? 'deprecated' : pkg.status;
    const values: IndexedPackage = {
      ...pkg,
      status,
      version,
      license: skill.license,
      warnings: skill.warnings,
    };
    let packageId: string;
    if (row) {
      packageId = row.id;
      if (!changed && rowMatches(row, values)) counts.unchanged += 1;
      else {
        await updatePackage(trx, row.id, values, now);
        if (row.status === 'delisted') {
          counts.indexed += 1;
          relisted.add(row.id);
        } else counts.updated += 1;
      }
    } else {
      const id = await insertPackage(trx, values, now);
      if (!id) {
        // (scope, name) belongs to another repository of the same owner: first come keeps it.
        const holder = await findPackage(trx, pkg.scope, pkg.name);
        reject(
          skill.path,
          key,
          `name collision: @${key} is already provided by ${holder?.source_repo ?? 'another repository'}`,
        );
        continue;
      }
      packageId = id;
      counts.indexed += 1;
    }
    claimedBy.set(key, skill.path);
    kept.add(packageId);
    // The same SKILL.md as its latest version: that version's dependencies, if it has none recorded yet.
    if (!changed && history && pkg.dependencies.length > 0)
      unrecorded.push({ versionId: history.latestId, dependencies: pkg.dependencies });
    skills.push({
      path: skill.path,
      name: `@${key}`,
      outcome: changed ? 'new-version' : 'unchanged',
      version: changed ? version : (history?.latestVersion ?? null),
      warnings: skill.warnings,
      reason: null,
    });
    if (changed && version !== null) {
      created.add(packageId);
      if (!skill.archive) throw new Error(`no archive was built for @${key}`);
      await insertVersion(
        trx,
        {
          packageId,
          version,
          declaredVersion: pkg.declaredVersion,
          digest: skill.digest,
          integrity: skill.archive.integrity,
          archiveSha256: skill.archive.sha256,
          totalBytes: skill.totalBytes,
          sourceCommit: input.snapshotCommit,
          indexingRunId: input.indexingRunId ?? null,
          warnings: skill.warnings,
          manifest: skill.manifest,
          scan: skill.scan,
          dependencies: pkg.dependencies,
        },
        now,
      );
      versions.push({ name: `@${key}`, version });
    }
  }
  let gone: typeof rows = [];
  if (!input.truncated) {
    gone = rows.filter((r) => r.status !== 'delisted' && !kept.has(r.id));
    await delistPackages(
      trx,
      gone.map((r) => r.id),
      now,
    );
    counts.delisted = gone.length;
    for (const row of gone) {
      skills.push({
        path: skillMdPath(row.source_path),
        name: `@${row.scope}/${row.name}`,
        outcome: 'delisted',
        version: null,
        warnings: [],
        reason: 'its SKILL.md is gone from the repository or no longer passes the rules',
      });
    }
  }
  // verified: what a proven run writes or confirms; a crawl's new version is not (docs/publishing.md).
  if (input.proven) await setVerified(trx, [...kept], true);
  else await setVerified(trx, [...created], false);
  const missing = await versionsWithoutDependencies(
    trx,
    unrecorded.map((u) => u.versionId),
  );
  for (const u of unrecorded) {
    if (missing.has(u.versionId)) await insertDependencies(trx, u.versionId, u.dependencies);
  }
  const goneIds = gone.map((r) => r.id);
  await refreshDependencyState(trx, {
    packageIds: [...kept, ...goneIds],
    changedIds: [...created, ...relisted, ...goneIds],
  });
  return { counts, versions, skills };
}

/**
 * Warns, on the versions and packages of this run, about each dependency no visible package answers
 * to (neither in the registry nor among this run's skills). The dependency is still recorded: it is
 * counted, and resolves, once that package is indexed.
 */
async function warnUnknownDependencies(trx: Db, prepared: PreparedVersion[]): Promise<void> {
  const declared = prepared.flatMap((skill) => skill.pkg.dependencies);
  if (declared.length === 0) return;
  const visible = await visiblePackageKeys(trx, declared);
  for (const skill of prepared) visible.add(`${skill.pkg.scope}/${skill.pkg.name}`);
  for (const skill of prepared) {
    for (const dependency of skill.pkg.dependencies) {
      if (!visible.has(`${dependency.scope}/${dependency.name}`))
        skill.warnings.push(unknownDependencyWarning(dependency));
    }
  }
}
