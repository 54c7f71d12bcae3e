import type {
  DependantsQuery,
  DependantsResponse,
  PackageDependency,
  VersionDependency,
} from '@pkgreg/contracts';
import type { Db } from '@pkgreg/db';
import semver from 'semver';
import { canRead, type ReadAccess } from '../access/read-access.js';
import { toPackageListItem } from '../packages/package-values.js';
import { findVisiblePackageId } from '../packages/packages.repository.js';
import { findPackageForVersions } from '../versions/versions.repository.js';
import {
  countDependants,
  type DependencyRow,
  listDependantRows,
  listDependenciesWithVersions,
  listVersionDependencies,
  lockDependencyGraph,
  refreshDependencyState,
} from './dependencies.repository.js';

// Dependencies (docs/versions.md, Dependencies): both directions of a package's, as the API shows them,
// and the transaction that keeps the counts true when a package's visibility changes.

/** A package by scope and name (the registry's address of it). */
export interface PackageKey {
  scope: string;
  name: string;
}

// Ranges include pre-releases, as the CLI resolves them: a pseudo-version of 1.2.x is the author's change.
const RANGE_OPTIONS = { includePrerelease: true } as const;

/** Whether a dependency resolves now: its package is visible and has a version the range allows. */
function resolves(row: DependencyRow): boolean {
  if (row.versions === null || row.versions.length === 0) return false;
  if (row.range === null) return true;
  return semver.maxSatisfying(row.versions, row.range, RANGE_OPTIONS) !== null;
}

/**
 * A dependency on a private package the reader may not read is left out of what it is shown (docs/versions.md,
 * Dependencies): to such a reader that package does not exist, and not even its name is shown. Leaving
 * the entry out (rather than a placeholder) keeps every shown entry a real, valid `@scope/name`.
 */
const shownTo = (access: ReadAccess) => (row: { scope: string; name: string; private: boolean }) =>
  canRead(access, row);

/**
 * The dependencies of a package's latest version (`version`, the newest not yanked), with whether each
 * resolves, that `access` may see (`hidden`: how many were left out). `depCount` says how many there
 * are: none costs no query.
 */
export async function latestDependencies(
  db: Db,
  pkg: { id: string; version: string | null; depCount: number },
  access: ReadAccess,
): Promise<{ dependencies: PackageDependency[]; hidden: number }> {
  if (pkg.depCount === 0 || pkg.version === null) return { dependencies: [], hidden: 0 };
  const rows = await listDependenciesWithVersions(db, pkg.id, pkg.version);
  const shown = rows.filter(shownTo(access));
  return {
    dependencies: shown.map((row) => ({
      name: `@${row.scope}/${row.name}`,
      range: row.range,
      resolves: resolves(row),
    })),
    hidden: rows.length - shown.length,
  };
}

/** What a version declares that `access` may see: facts of that version. */
export async function versionDependencies(
  db: Db,
  versionId: string,
  access: ReadAccess,
): Promise<{ dependencies: VersionDependency[]; hidden: number }> {
  const rows = await listVersionDependencies(db, versionId);
  const shown = rows.filter(shownTo(access));
  return {
    dependencies: shown.map((row) => ({ name: `@${row.scope}/${row.name}`, range: row.range })),
    hidden: rows.length - shown.length,
  };
}

/**
 * A page of the packages whose latest version depends on this one, those `access` may read; null for a
 * package that is not visible to it (the API answers 404, as detail does).
 */
export async function listDependants(
  db: Db,
  key: PackageKey,
  query: DependantsQuery,
  access: ReadAccess,
): Promise<DependantsResponse | null> {
  const pkg = await findVisiblePackageId(db, key.scope, key.name);
  if (!pkg || !canRead(access, { ...key, private: pkg.private })) return null;
  const offset = (query.page - 1) * query.pageSize;
  const [rows, total] = await Promise.all([
    listDependantRows(db, key.scope, key.name, offset, query.pageSize, access),
    countDependants(db, key.scope, key.name, access),
  ]);
  return {
    data: rows.map(toPackageListItem),
    total,
    page: query.page,
    pageSize: query.pageSize,
  };
}

/**
 * Runs an operator's change of a package's visibility (removal) in a transaction that keeps the
 * dependency counts true and moves its dependants' detail, whose `resolves` reads it.
 */
export async function withDependencyRefresh<T>(
  db: Db,
  key: PackageKey,
  change: (trx: Db) => Promise<T>,
): Promise<T> {
  return db.transaction().execute(async (trx) => {
    // Before the change locks the package's row (the indexer takes it in the same order).
    await lockDependencyGraph(trx);
    const result = await change(trx);
    const pkg = await findPackageForVersions(trx, key.scope, key.name);
    if (pkg) await refreshDependencyState(trx, { packageIds: [pkg.id], changedIds: [pkg.id] });
    return result;
  });
}
