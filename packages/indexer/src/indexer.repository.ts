import type { Database, Db } from '@pkgreg/db';
import { type Kysely, type Selectable, sql } from 'kysely';
import type { DerivedPackage } from './skill-md.js';
import type { RepoMeta, SourceKind } from './types.js';

// SQL of the indexer: plain functions taking the database (or a transaction) first (STYLE.md §1).

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

function columns(pkg: DerivedPackage, now: Date) {
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
    last_indexed_at: now,
  };
}

/** Inserts unless (scope, name) is taken; returns the new id, or null on a name collision. */
export async function insertPackage(db: Conn, pkg: DerivedPackage, now: Date): Promise<string | null> {
  const row = await db
    .insertInto('packages')
    .values({ ...columns(pkg, now), first_indexed_at: now })
    .onConflict((oc) => oc.columns(['scope', 'name']).doNothing())
    .returning('id')
    .executeTakeFirst();
  return row?.id ?? null;
}

/** Rewrites the indexer's columns; download_count, first_indexed_at, verified, featured are left alone. */
export async function updatePackage(db: Conn, id: string, pkg: DerivedPackage, now: Date): Promise<void> {
  await db.updateTable('packages').set(columns(pkg, now)).where('id', '=', id).execute();
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
export function rowMatches(row: PackageRow, pkg: DerivedPackage): boolean {
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
    row.status === pkg.status
  );
}

export type { Db };
