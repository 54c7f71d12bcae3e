import type { Database } from '@pkgreg/db';
import type { Rejection, RunCounts } from '@pkgreg/registry';
import { type Kysely, type Selectable, sql } from 'kysely';
import type { RepoMeta, SourceKind } from './types.js';

// SQL of the indexer's own records: the sources it reads, their runs and rejections. Packages, versions
// and scopes are written by @pkgreg/registry. Plain functions taking the database (or a transaction) first.

type Conn = Kysely<Database>;

export type { Rejection, RunCounts };
export type SourceRow = Selectable<Database['indexed_sources']>;

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
