import type { Database, Db } from '@pkgreg/db';
import type { ScanResult } from '@pkgreg/scan';
import { type ExpressionBuilder, type Kysely, sql } from 'kysely';
import type { DeclaredDependency } from '../dependencies/declared-dependencies.js';
import { insertDependencies } from '../dependencies/dependencies.repository.js';
import type { ManifestFile } from './versioning.js';

// SQL of versions (docs/versions.md): what a version is and holds, read by the API and written once by
// an indexing run. Its files are never updated and neither is the row, but for its risk scan (rescan.ts);
// yanks live apart (yanks.repository.ts).

type Conn = Kysely<Database>;

export interface VersionedPackageRow {
  id: string;
  status: 'active' | 'deprecated' | 'delisted';
  removed_at: Date | null;
  removal_reason: string | null;
  /** Under an operator's quarantine: its metadata stays readable for review; its bytes are 410. */
  quarantined_at: Date | null;
  quarantine_reason: string | null;
  /** Effective privacy: readers that may not read it are answered as for a missing package. */
  private: boolean;
}

/** The package whatever its status (exact versions of a delisted package stay fetchable). */
export async function findPackageForVersions(
  db: Db,
  scope: string,
  name: string,
): Promise<VersionedPackageRow | undefined> {
  return db
    .selectFrom('packages')
    .select([
      'id',
      'status',
      'removed_at',
      'removal_reason',
      'quarantined_at',
      'quarantine_reason',
      'private',
    ])
    .where('scope', '=', scope)
    .where('name', '=', name)
    .executeTakeFirst();
}

const SUMMARY_COLUMNS = [
  'id',
  'version',
  'digest',
  'integrity',
  'archive_sha256',
  'file_count',
  'total_bytes',
  'source_commit',
  'created_at',
  'warnings',
  'risk',
  'findings',
] as const;

type VersionsEb = ExpressionBuilder<Database, 'package_versions'>;

const yankOf = (eb: VersionsEb) =>
  eb.selectFrom('package_version_yanks as y').whereRef('y.version_id', '=', 'package_versions.id');

/** Whether the owner yanked the version, and why (yanks live apart: versions are never updated). */
const YANK_COLUMNS = (eb: VersionsEb) => [
  eb.exists(yankOf(eb).select('y.version_id')).as('yanked'),
  yankOf(eb).select('y.reason').as('yank_reason'),
];

export async function listVersionRows(db: Db, packageId: string, offset: number, limit: number) {
  return db
    .selectFrom('package_versions')
    .select(SUMMARY_COLUMNS)
    .select(YANK_COLUMNS)
    .where('package_id', '=', packageId)
    .orderBy('seq', 'desc')
    .offset(offset)
    .limit(limit)
    .execute();
}

export type VersionRow = Awaited<ReturnType<typeof listVersionRows>>[number];

export async function countVersions(db: Db, packageId: string): Promise<number> {
  const row = await db
    .selectFrom('package_versions')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('package_id', '=', packageId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** An exact version (yanked or not), or the newest one not yanked when `version` is null. */
export async function findVersionRow(
  db: Db,
  packageId: string,
  version: string | null,
): Promise<VersionRow | undefined> {
  let query = db
    .selectFrom('package_versions')
    .select(SUMMARY_COLUMNS)
    .select(YANK_COLUMNS)
    .where('package_id', '=', packageId);
  query =
    version === null
      ? query
          .where((eb) => eb.not(eb.exists(yankOf(eb).select('y.version_id'))))
          .orderBy('seq', 'desc')
          .limit(1)
      : query.where('version', '=', version);
  return query.executeTakeFirst();
}

export async function listVersionFiles(db: Db, versionId: string) {
  return (
    db
      .selectFrom('package_version_files')
      .select(['path', 'size', 'sha256', 'git_sha1', 'executable', 'link_target'])
      .where('version_id', '=', versionId)
      // Code-point order, as the manifest and the archive are sorted, whatever the database's collation.
      .orderBy(sql`path collate "C"`)
      .execute()
  );
}

export async function findVersionFile(db: Db, versionId: string, path: string) {
  return db
    .selectFrom('package_version_files')
    .select(['path', 'size', 'sha256', 'link_target'])
    .where('version_id', '=', versionId)
    .where('path', '=', path)
    .executeTakeFirst();
}

/** What a package's versions so far decide about the next one. */
export interface VersionHistory {
  /** The newest version's id (the one a SKILL.md with `latestDigest` belongs to). */
  latestId: string;
  latestDigest: string;
  latestVersion: string;
  /** The newest version not yanked by its owner (what the package row names); null when all are. */
  latestListed: string | null;
  /** Every version string the package has. */
  used: Set<string>;
  /** The declared version of its newest version that declared one. */
  lastDeclared: string | null;
}

export async function versionHistories(db: Conn, packageIds: string[]): Promise<Map<string, VersionHistory>> {
  const histories = new Map<string, VersionHistory>();
  if (packageIds.length === 0) return histories;
  const rows = await db
    .selectFrom('package_versions as v')
    .leftJoin('package_version_yanks as y', 'y.version_id', 'v.id')
    .select(['v.id', 'v.package_id', 'v.version', 'v.declared_version', 'v.digest', 'y.version_id as yanked'])
    .where('v.package_id', 'in', packageIds)
    .orderBy('v.seq', 'desc')
    .execute();
  for (const row of rows) {
    let history = histories.get(row.package_id);
    if (!history) {
      // Newest first: the first row of a package is its latest version.
      history = {
        latestId: row.id,
        latestDigest: row.digest,
        latestVersion: row.version,
        latestListed: null,
        used: new Set(),
        lastDeclared: null,
      };
      histories.set(row.package_id, history);
    }
    if (history.latestListed === null && row.yanked === null) history.latestListed = row.version;
    history.used.add(row.version);
    history.lastDeclared ??= row.declared_version;
  }
  return histories;
}

export interface NewVersion {
  packageId: string;
  version: string;
  declaredVersion: string | null;
  digest: string;
  integrity: string;
  archiveSha256: string;
  totalBytes: number;
  sourceCommit: string | null;
  /** The indexing run creating it; absent or null for an upload. */
  indexingRunId?: string | null;
  warnings: string[];
  manifest: ManifestFile[];
  /** The version's risk scan, stored with it (and its risk on the package: the latest version's). */
  scan: ScanResult | null;
  /** What its SKILL.md declares in `metadata.dependencies`. */
  dependencies: readonly DeclaredDependency[];
}

/** A version row, its manifest, its scan and its dependencies; called inside the run's transaction. */
export async function insertVersion(db: Conn, v: NewVersion, now: Date): Promise<void> {
  const row = await db
    .insertInto('package_versions')
    .values({
      package_id: v.packageId,
      version: v.version,
      declared_version: v.declaredVersion,
      digest: v.digest,
      integrity: v.integrity,
      archive_sha256: v.archiveSha256,
      file_count: v.manifest.length,
      total_bytes: v.totalBytes,
      source_commit: v.sourceCommit,
      indexing_run_id: v.indexingRunId ?? null,
      warnings: JSON.stringify(v.warnings),
      created_at: now,
      risk: v.scan?.risk ?? null,
      findings: JSON.stringify(v.scan?.findings ?? []),
      scanned_at: v.scan ? now : null,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  // The newest version's risk is the package's: list and search read it from the row they read anyway.
  await db
    .updateTable('packages')
    .set({ risk: v.scan?.risk ?? null })
    .where('id', '=', v.packageId)
    .execute();
  for (let at = 0; at < v.manifest.length; at += 1000) {
    await db
      .insertInto('package_version_files')
      .values(
        v.manifest.slice(at, at + 1000).map((f) => ({
          version_id: row.id,
          path: f.path,
          size: f.size,
          sha256: f.sha256,
          git_sha1: f.gitSha1,
          executable: f.mode === '100755',
          link_target: f.linkTarget,
        })),
      )
      .execute();
  }
  await insertDependencies(db, row.id, v.dependencies);
}

export async function findVersionOf(db: Conn, packageId: string, version: string) {
  return db
    .selectFrom('package_versions as v')
    .leftJoin('package_version_yanks as y', 'y.version_id', 'v.id')
    .select(['v.id', 'v.version', 'y.version_id as yanked', 'y.reason as yank_reason'])
    .where('v.package_id', '=', packageId)
    .where('v.version', '=', version)
    .executeTakeFirst();
}

/**
 * The package row names its newest version not yanked (detail's `version`, what `latest` serves);
 * null when every version is yanked. Returns it.
 */
export async function refreshLatestVersion(db: Conn, packageId: string): Promise<string | null> {
  const latest = await db
    .selectFrom('package_versions as v')
    .select('v.version')
    .where('v.package_id', '=', packageId)
    .where((eb) =>
      eb.not(
        eb.exists(
          eb
            .selectFrom('package_version_yanks as y')
            .select('y.version_id')
            .whereRef('y.version_id', '=', 'v.id'),
        ),
      ),
    )
    .orderBy('v.seq', 'desc')
    .limit(1)
    .executeTakeFirst();
  const version = latest?.version ?? null;
  await db
    .updateTable('packages')
    .set({ version })
    .where('id', '=', packageId)
    .where(sql<boolean>`version is distinct from ${version}`)
    .execute();
  return version;
}

/**
 * An exact version's archive with its package's moderation, in one round trip: a download's whole read
 * when the archive is served (errors are read the long way, by the service).
 */
export async function findExactArchiveRow(db: Db, scope: string, name: string, version: string) {
  return db
    .selectFrom('packages as p')
    .innerJoin('package_versions as v', 'v.package_id', 'p.id')
    .select([
      'p.removed_at',
      'p.quarantined_at',
      'p.private',
      'v.version',
      'v.archive_sha256',
      'v.integrity',
      'v.created_at',
    ])
    .where('p.scope', '=', scope)
    .where('p.name', '=', name)
    .where('v.version', '=', version)
    .executeTakeFirst();
}
