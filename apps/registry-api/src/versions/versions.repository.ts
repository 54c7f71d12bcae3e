import type { Database, Db } from '@pkgreg/db';
import { type ExpressionBuilder, sql } from 'kysely';

// SQL of the versions room: plain functions taking the database first.

export interface VersionedPackageRow {
  id: string;
  status: 'active' | 'deprecated' | 'delisted';
  removed_at: Date | null;
  removal_reason: string | null;
  /** Under an operator's quarantine: its metadata stays readable for review; its bytes are 410. */
  quarantined_at: Date | null;
  quarantine_reason: string | null;
}

/** The package whatever its status (exact versions of a delisted package stay fetchable). */
export async function findPackageForVersions(
  db: Db,
  scope: string,
  name: string,
): Promise<VersionedPackageRow | undefined> {
  return db
    .selectFrom('packages')
    .select(['id', 'status', 'removed_at', 'removal_reason', 'quarantined_at', 'quarantine_reason'])
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
