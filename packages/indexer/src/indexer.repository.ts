import type { Database, Db } from '@pkgreg/db';
import type { ScanResult } from '@pkgreg/scan';
import { type Kysely, type Selectable, sql } from 'kysely';
import type { DeclaredDependency } from './dependencies.js';
import { insertDependencies } from './dependencies.repository.js';
import type { DerivedPackage } from './skill-md.js';
import type { RepoMeta, SourceKind } from './types.js';
import type { ManifestFile } from './versioning.js';

// SQL of the indexer: plain functions taking the database (or a transaction) first.

type Conn = Kysely<Database>;
export type PackageRow = Selectable<Database['packages']>;
export type SourceRow = Selectable<Database['indexed_sources']>;

export interface RunCounts {
  indexed: number;
  updated: number;
  unchanged: number;
  delisted: number;
  rejected: number;
}

export interface Rejection {
  /** Path of the SKILL.md within the repository. */
  path: string;
  reason: string;
}

/** Session-level advisory lock: held while the source is fetched and written, released on disconnect. */
export async function lockSource(conn: Conn, key: string): Promise<void> {
  await sql`select pg_advisory_lock(hashtextextended(${key}, 0))`.execute(conn);
}

export async function unlockSource(conn: Conn, key: string): Promise<void> {
  await sql`select pg_advisory_unlock(hashtextextended(${key}, 0))`.execute(conn);
}

export async function findSource(
  db: Conn,
  kind: SourceKind,
  locator: string,
): Promise<SourceRow | undefined> {
  return db
    .selectFrom('indexed_sources')
    .selectAll()
    .where('kind', '=', kind)
    .where('locator', '=', locator)
    .executeTakeFirst();
}

/** The GitHub source of a repository by its id, whatever locator it was first indexed under. */
export async function findSourceByRepositoryId(
  db: Conn,
  repositoryId: number,
): Promise<SourceRow | undefined> {
  return db
    .selectFrom('indexed_sources')
    .selectAll()
    .where('kind', '=', 'github')
    .where('repository_id', '=', repositoryId)
    .orderBy('created_at')
    .limit(1)
    .executeTakeFirst();
}

/** A renamed or transferred repository's source takes the locator it is published under now. */
export async function moveSourceLocator(db: Conn, id: string, locator: string): Promise<void> {
  await db.updateTable('indexed_sources').set({ locator }).where('id', '=', id).execute();
}

/** Another source already indexed under the same `owner/repo`. */
export async function findOtherSourceOfRepo(
  db: Conn,
  sourceRepo: string,
  kind: SourceKind,
  locator: string,
): Promise<SourceRow | undefined> {
  return db
    .selectFrom('indexed_sources')
    .selectAll()
    .where(sql<boolean>`lower(source_repo) = lower(${sourceRepo})`)
    .where((eb) => eb.or([eb('kind', '<>', kind), eb('locator', '<>', locator)]))
    .executeTakeFirst();
}

export async function saveSource(
  db: Conn,
  values: {
    kind: SourceKind;
    locator: string;
    sourceRepo: string;
    defaultBranch: string;
    etags: Record<string, string>;
    repoMeta: RepoMeta;
    includeHidden: boolean;
    /** The branch asked for (null: the default branch). */
    ref: string | null;
    repositoryId: number | null;
  },
): Promise<string> {
  const row = {
    kind: values.kind,
    locator: values.locator,
    source_repo: values.sourceRepo,
    default_branch: values.defaultBranch,
    etags: JSON.stringify(values.etags),
    repo_meta: JSON.stringify(values.repoMeta),
    last_run_at: new Date(),
    include_hidden: values.includeHidden,
    ref: values.ref,
    repository_id: values.repositoryId,
  };
  const saved = await db
    .insertInto('indexed_sources')
    .values(row)
    .onConflict((oc) =>
      oc.columns(['kind', 'locator']).doUpdateSet({
        source_repo: row.source_repo,
        default_branch: row.default_branch,
        etags: row.etags,
        repo_meta: row.repo_meta,
        last_run_at: row.last_run_at,
        include_hidden: row.include_hidden,
        ref: row.ref,
        repository_id: row.repository_id,
      }),
    )
    .returning('id')
    .executeTakeFirstOrThrow();
  return saved.id;
}

export async function touchSource(db: Conn, id: string): Promise<void> {
  await db.updateTable('indexed_sources').set({ last_run_at: new Date() }).where('id', '=', id).execute();
}

export async function listSources(db: Conn): Promise<SourceRow[]> {
  return db
    .selectFrom('indexed_sources')
    .selectAll()
    .orderBy(sql`last_run_at asc nulls first`)
    .orderBy('locator')
    .execute();
}

export async function createRun(db: Conn, locator: string, sourceId: string | null): Promise<string> {
  const row = await db
    .insertInto('indexing_runs')
    .values({ locator, source_id: sourceId })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

export async function finishRun(
  db: Conn,
  runId: string,
  values: {
    sourceId: string | null;
    status: 'succeeded' | 'failed';
    counts: RunCounts;
    error: string | null;
  },
): Promise<Date> {
  const row = await db
    .updateTable('indexing_runs')
    .set({
      source_id: values.sourceId,
      status: values.status,
      ...values.counts,
      error: values.error,
      finished_at: sql<Date>`clock_timestamp()`,
    })
    .where('id', '=', runId)
    .returning('finished_at')
    .executeTakeFirstOrThrow();
  return row.finished_at ?? new Date();
}

export async function insertRejections(db: Conn, runId: string, rejections: Rejection[]): Promise<void> {
  if (rejections.length === 0) return;
  await db
    .insertInto('indexing_rejections')
    .values(rejections.map((r) => ({ run_id: runId, path: r.path, reason: r.reason })))
    .execute();
}

/** Rejections of the source's last successful run (reused when the host says nothing changed). */
export async function lastRejections(db: Conn, sourceId: string): Promise<Rejection[]> {
  const last = await db
    .selectFrom('indexing_runs')
    .select('id')
    .where('source_id', '=', sourceId)
    .where('status', '=', 'succeeded')
    .orderBy('started_at', 'desc')
    .limit(1)
    .executeTakeFirst();
  if (!last) return [];
  return db
    .selectFrom('indexing_rejections')
    .select(['path', 'reason'])
    .where('run_id', '=', last.id)
    .orderBy('id')
    .execute();
}

export interface LastRun {
  status: 'running' | 'succeeded' | 'failed';
  counts: RunCounts;
  error: string | null;
  startedAt: Date;
  finishedAt: Date | null;
}

export async function lastRunOf(db: Conn, sourceId: string): Promise<LastRun | null> {
  const row = await db
    .selectFrom('indexing_runs')
    .selectAll()
    .where('source_id', '=', sourceId)
    .orderBy('started_at', 'desc')
    .limit(1)
    .executeTakeFirst();
  if (!row) return null;
  return {
    status: row.status,
    counts: {
      indexed: row.indexed,
      updated: row.updated,
      unchanged: row.unchanged,
      delisted: row.delisted,
      rejected: row.rejected,
    },
    error: row.error,
    startedAt: row.started_at,
    finishedAt: row.finished_at,
  };
}

/** Packages of the repository under any of its names (a renamed repository keeps its packages). */
export async function packagesOfRepo(db: Conn, sourceRepos: string[]): Promise<PackageRow[]> {
  return db.selectFrom('packages').selectAll().where('source_repo', 'in', sourceRepos).execute();
}

export async function countListedOfRepo(db: Conn, sourceRepo: string): Promise<number> {
  const row = await db
    .selectFrom('packages')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('source_repo', '=', sourceRepo)
    .where('status', '<>', 'delisted')
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function findPackage(db: Conn, scope: string, name: string): Promise<PackageRow | undefined> {
  return db
    .selectFrom('packages')
    .selectAll()
    .where('scope', '=', scope)
    .where('name', '=', name)
    .executeTakeFirst();
}

/** A package row's indexer-owned values: the SKILL.md's fields plus what the folder and versions decide. */
export type IndexedPackage = DerivedPackage & {
  /** The latest version's string (the newest not yanked); null when every version is yanked. */
  version: string | null;
  license: string | null;
  warnings: string[];
};

function columns(pkg: IndexedPackage, now: Date) {
  return {
    scope: pkg.scope,
    name: pkg.name,
    description: pkg.description,
    kind: pkg.kind,
    category: pkg.category,
    tags: pkg.tags,
    compatibility: pkg.compatibility,
    language: pkg.language,
    version: pkg.version,
    source_repo: pkg.sourceRepo,
    source_path: pkg.sourcePath,
    source_ref: pkg.sourceRef,
    repo_url: pkg.repoUrl,
    homepage_url: pkg.homepageUrl,
    repo_owner: pkg.repoOwner,
    author: pkg.author,
    repo_stars: pkg.repoStars,
    license: pkg.license,
    skill_md_raw: pkg.skillMdRaw,
    frontmatter: JSON.stringify(pkg.frontmatter),
    allowed_tools: pkg.allowedTools,
    token_count: pkg.tokenCount,
    file_count: pkg.fileCount,
    progressive_disclosure: pkg.progressiveDisclosure,
    status: pkg.status,
    last_commit_sha: pkg.lastCommitSha,
    warnings: JSON.stringify(pkg.warnings),
    last_indexed_at: now,
  };
}

/** Inserts unless (scope, name) is taken; returns the new id, or null on a name collision. */
export async function insertPackage(db: Conn, pkg: IndexedPackage, now: Date): Promise<string | null> {
  const row = await db
    .insertInto('packages')
    .values({ ...columns(pkg, now), first_indexed_at: now })
    .onConflict((oc) => oc.columns(['scope', 'name']).doNothing())
    .returning('id')
    .executeTakeFirst();
  return row?.id ?? null;
}

/**
 * Rewrites the indexer's columns; download_count, first_indexed_at, verified, featured and the owner's
 * deprecation are left alone.
 */
export async function updatePackage(db: Conn, id: string, pkg: IndexedPackage, now: Date): Promise<void> {
  await db.updateTable('packages').set(columns(pkg, now)).where('id', '=', id).execute();
}

/**
 * `verified`: true once a proven run (a publish, a signed webhook) wrote or confirmed the package's
 * latest version, false once a crawl created one. Rows already right are not rewritten.
 */
export async function setVerified(db: Conn, ids: string[], verified: boolean): Promise<void> {
  if (ids.length === 0) return;
  await db
    .updateTable('packages')
    .set({ verified })
    .where('id', 'in', ids)
    .where('verified', '<>', verified)
    .execute();
}

/** The listed packages of a repository as a not-modified run reports them. */
export async function listedOfRepo(db: Conn, sourceRepo: string) {
  return db
    .selectFrom('packages')
    .select(['scope', 'name', 'source_path', 'version', 'warnings'])
    .where('source_repo', '=', sourceRepo)
    .where('status', '<>', 'delisted')
    .orderBy('source_path')
    .execute();
}

export async function delistPackages(db: Conn, ids: string[], now: Date): Promise<void> {
  if (ids.length === 0) return;
  await db
    .updateTable('packages')
    .set({ status: 'delisted', last_indexed_at: now })
    .where('id', 'in', ids)
    .execute();
}

/** True when the stored row already says everything `pkg` says (so no write is needed). */
export function rowMatches(row: PackageRow, pkg: IndexedPackage): boolean {
  const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
  return (
    row.last_commit_sha === pkg.lastCommitSha &&
    row.scope === pkg.scope &&
    row.name === pkg.name &&
    row.description === pkg.description &&
    row.kind === pkg.kind &&
    row.category === pkg.category &&
    same(row.tags, pkg.tags) &&
    same(row.compatibility, pkg.compatibility) &&
    row.language === pkg.language &&
    row.version === pkg.version &&
    row.source_repo === pkg.sourceRepo &&
    row.source_path === pkg.sourcePath &&
    row.source_ref === pkg.sourceRef &&
    row.repo_url === pkg.repoUrl &&
    row.homepage_url === pkg.homepageUrl &&
    row.repo_owner === pkg.repoOwner &&
    row.author === pkg.author &&
    row.repo_stars === pkg.repoStars &&
    row.license === pkg.license &&
    same(row.allowed_tools, pkg.allowedTools) &&
    row.token_count === pkg.tokenCount &&
    row.file_count === pkg.fileCount &&
    row.progressive_disclosure === pkg.progressiveDisclosure &&
    row.status === pkg.status &&
    same(row.warnings, pkg.warnings)
  );
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

export type { Db };
