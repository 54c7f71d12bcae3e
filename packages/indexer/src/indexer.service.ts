import { posix } from 'node:path';
import type { Db } from '@pkgreg/db';
import type { Logger } from 'pino';
import { IndexingError, type IndexingErrorCode } from './errors.js';
import { GitSource } from './git-source.js';
import { GitHubClient, GitHubSource, type GitHubSourceOptions } from './github-source.js';
import {
  countListedOfRepo,
  createRun,
  delistPackages,
  findOtherSourceOfRepo,
  findPackage,
  findSource,
  finishRun,
  insertPackage,
  insertRejections,
  lastRejections,
  lastRunOf,
  listSources,
  lockSource,
  packagesOfRepo,
  type Rejection,
  type RunCounts,
  rowMatches,
  saveSource,
  unlockSource,
  updatePackage,
} from './indexer.repository.js';
import { analyzeSkill, type DerivedPackage, MAX_SKILL_MD_BYTES, sanitizeScope } from './skill-md.js';
import type { RepoMeta, SkillSource, SourceKind, TreeFile } from './types.js';

export interface IndexerDeps {
  db: Db;
  /** GitHub (Enterprise) connection settings; defaults to api.github.com without a token. */
  github?: GitHubSourceOptions;
  logger?: Logger;
  /** A client to share between calls so they share one rate-limit budget (reindexAll does this). */
  githubClient?: GitHubClient;
}

export interface IndexRequest {
  kind: SourceKind;
  /** `owner/repo` (or its URL) for GitHub; an absolute path for a local git repository. */
  locator: string;
  /** Local git only: the scope; default the stored one, else the parent directory's name, else `local`. */
  owner?: string;
}

export interface IndexSummary {
  /** The `indexing_runs` row; null only for sources skipped by reindexAll after a rate limit. */
  runId: string | null;
  kind: SourceKind;
  /** Normalised locator (lowercased `owner/repo`, or the repository's top-level path). */
  locator: string;
  /** `owner/repo` as indexed; null when the run failed before reaching the source. */
  sourceRepo: string | null;
  status: 'succeeded' | 'failed';
  /** New packages, and delisted ones that reappeared. */
  indexed: number;
  /** Packages rewritten because their SKILL.md, directory or repository facts changed. */
  updated: number;
  /** Packages left untouched (nothing about them changed). */
  unchanged: number;
  /** Packages whose SKILL.md vanished or no longer passes the rules. */
  delisted: number;
  rejected: number;
  /** Each SKILL.md that was not indexed, with the reason. */
  rejections: Rejection[];
  /** The host answered 304 for the tree: nothing was read or written. */
  notModified: boolean;
  /** The host truncated the tree listing: nothing was delisted. */
  truncated: boolean;
  error: { code: IndexingErrorCode; message: string; retryAt: string | null } | null;
  startedAt: string;
  finishedAt: string;
}

export interface KnownSource {
  id: string;
  kind: SourceKind;
  locator: string;
  sourceRepo: string;
  defaultBranch: string | null;
  createdAt: Date;
  lastRunAt: Date | null;
  /** Packages of the source that are not delisted. */
  listedPackages: number;
  lastRun: {
    status: 'running' | 'succeeded' | 'failed';
    counts: RunCounts;
    error: string | null;
    startedAt: Date;
    finishedAt: Date | null;
  } | null;
}

/** An IndexingError that carries the run's summary (indexSource throws these). */
export type IndexFailure = IndexingError & { summary: IndexSummary };

const ZERO: RunCounts = { indexed: 0, updated: 0, unchanged: 0, delisted: 0, rejected: 0 };

function dirOf(path: string): string {
  const dir = posix.dirname(path);
  return dir === '.' ? '' : dir;
}

function isSkillMd(path: string): boolean {
  return path === 'SKILL.md' || path.endsWith('/SKILL.md');
}

function parseRepoMeta(value: unknown): RepoMeta | null {
  const meta = value as Partial<RepoMeta> | null;
  if (!meta || typeof meta.owner !== 'string' || typeof meta.defaultBranch !== 'string') return null;
  return meta as RepoMeta;
}

async function openSource(deps: IndexerDeps, request: IndexRequest): Promise<SkillSource> {
  if (request.kind === 'github') {
    return new GitHubSource(request.locator, deps.githubClient ?? new GitHubClient(deps.github));
  }
  if (request.kind !== 'git') {
    throw new IndexingError('invalid_locator', `unknown source kind "${String(request.kind)}"`);
  }
  const source = await GitSource.open(request.locator, { owner: request.owner });
  if (request.owner !== undefined) return source;
  // Re-index keeps the scope the repository was first indexed under.
  const stored = await findSource(deps.db, 'git', source.locator);
  const storedOwner = stored?.source_repo.split('/')[0];
  if (storedOwner && storedOwner !== source.owner)
    return GitSource.open(source.locator, { owner: storedOwner });
  return source;
}

interface LockedOutcome {
  sourceId: string;
  sourceRepo: string;
  counts: RunCounts;
  rejections: Rejection[];
  notModified: boolean;
  truncated: boolean;
}

/** Files of each skill directory, relative to it; a nested skill's files belong to the nested skill. */
function filesBySkillDir(files: TreeFile[], skillDirs: Set<string>): Map<string, string[]> {
  const out = new Map<string, string[]>([...skillDirs].map((d) => [d, []]));
  for (const file of files) {
    let dir = dirOf(file.path);
    for (;;) {
      const bucket = out.get(dir);
      if (bucket) {
        bucket.push(dir === '' ? file.path : file.path.slice(dir.length + 1));
        break;
      }
      if (dir === '') break;
      dir = dirOf(dir);
    }
  }
  return out;
}

async function indexLocked(
  conn: Db,
  source: SkillSource,
  runId: string,
  logger: Logger | undefined,
): Promise<LockedOutcome> {
  // Read under the lock: a run that held it before us may have moved the ETags on.
  const known = await findSource(conn, source.kind, source.locator);
  const snap = await source.snapshot({
    etags: known?.etags ?? {},
    cachedMeta: known ? parseRepoMeta(known.repo_meta) : null,
  });
  const scope = sanitizeScope(snap.repo.owner);
  if (!scope)
    throw new IndexingError('invalid_locator', `owner "${snap.repo.owner}" cannot be made a valid scope`);
  const sourceRepo = `${snap.repo.owner}/${snap.repo.name}`;
  const other = await findOtherSourceOfRepo(conn, sourceRepo, source.kind, source.locator);
  if (other) {
    throw new IndexingError(
      'conflict',
      `${sourceRepo} is already indexed from ${other.kind} source ${other.locator}`,
    );
  }
  const sourceValues = {
    kind: source.kind,
    locator: source.locator,
    sourceRepo,
    defaultBranch: snap.repo.defaultBranch,
    etags: snap.etags,
    repoMeta: snap.repo,
  };

  if (snap.files === null) {
    const sourceId = await saveSource(conn, sourceValues);
    const rejections = known ? await lastRejections(conn, known.id) : [];
    await insertRejections(conn, runId, rejections);
    const unchanged = await countListedOfRepo(conn, sourceRepo);
    return {
      sourceId,
      sourceRepo,
      counts: { ...ZERO, unchanged, rejected: rejections.length },
      rejections,
      notModified: true,
      truncated: false,
    };
  }

  // Code-point order, not locale order: "first by path wins" must not depend on the machine.
  const skillFiles = snap.files
    .filter((f) => isSkillMd(f.path))
    .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  const dirFiles = filesBySkillDir(snap.files, new Set(skillFiles.map((f) => dirOf(f.path))));
  // Under its previous name too: a renamed or transferred repository keeps its packages.
  const names = [...new Set([sourceRepo, known?.source_repo ?? sourceRepo])];
  const stored = await packagesOfRepo(conn, names);
  // Content is addressed by blob SHA: a SKILL.md we already hold is never fetched again.
  const rawBySha = new Map(
    stored.filter((r) => r.last_commit_sha).map((r) => [r.last_commit_sha, r.skill_md_raw]),
  );

  const rejections: Rejection[] = [];
  const derived: { path: string; pkg: DerivedPackage }[] = [];
  const tooLarge = (file: TreeFile) => file.size !== null && file.size > MAX_SKILL_MD_BYTES;
  if (source.readBlobs) {
    const missing = skillFiles.filter((f) => !tooLarge(f) && !rawBySha.has(f.sha)).map((f) => f.sha);
    for (const [sha, raw] of await source.readBlobs(missing)) rawBySha.set(sha, raw);
  }
  for (const file of skillFiles) {
    if (tooLarge(file)) {
      rejections.push({ path: file.path, reason: `SKILL.md is larger than ${MAX_SKILL_MD_BYTES} bytes` });
      continue;
    }
    const raw = rawBySha.get(file.sha) ?? (await source.readBlob(file.sha));
    const dir = dirOf(file.path);
    const analysis = analyzeSkill({
      raw,
      sha: file.sha,
      dir,
      dirFiles: dirFiles.get(dir) ?? ['SKILL.md'],
      repo: snap.repo,
      scope,
      sourceRepo,
    });
    if (analysis.ok) derived.push({ path: file.path, pkg: analysis.pkg });
    else rejections.push({ path: file.path, reason: analysis.reason });
  }

  const counts: RunCounts = { ...ZERO };
  const sourceId = await conn.transaction().execute(async (trx) => {
    const now = new Date();
    const rows = await packagesOfRepo(trx, names);
    const byName = new Map(rows.map((r) => [`${r.scope}/${r.name}`, r]));
    const claimedBy = new Map<string, string>();
    const kept = new Set<string>();
    for (const { path, pkg } of derived) {
      const key = `${pkg.scope}/${pkg.name}`;
      const earlier = claimedBy.get(key);
      if (earlier) {
        rejections.push({ path, reason: `duplicate name "${pkg.name}": also defined by ${earlier}` });
        continue;
      }
      const row = byName.get(key);
      if (row) {
        claimedBy.set(key, path);
        kept.add(row.id);
        if (rowMatches(row, pkg)) {
          counts.unchanged += 1;
        } else {
          await updatePackage(trx, row.id, pkg, now);
          if (row.status === 'delisted') counts.indexed += 1;
          else counts.updated += 1;
        }
        continue;
      }
      const id = await insertPackage(trx, pkg, now);
      if (id) {
        claimedBy.set(key, path);
        kept.add(id);
        counts.indexed += 1;
        continue;
      }
      // (scope, name) belongs to another repository of the same owner: first come keeps it.
      const holder = await findPackage(trx, pkg.scope, pkg.name);
      rejections.push({
        path,
        reason: `name collision: @${pkg.scope}/${pkg.name} is already provided by ${holder?.source_repo ?? 'another repository'}`,
      });
    }
    if (!snap.truncated) {
      const gone = rows.filter((r) => r.status !== 'delisted' && !kept.has(r.id)).map((r) => r.id);
      await delistPackages(trx, gone, now);
      counts.delisted = gone.length;
    } else {
      logger?.warn({ sourceRepo }, 'tree listing truncated by the host; nothing delisted');
    }
    counts.rejected = rejections.length;
    const id = await saveSource(trx, sourceValues);
    await insertRejections(trx, runId, rejections);
    return id;
  });
  return { sourceId, sourceRepo, counts, rejections, notModified: false, truncated: snap.truncated };
}

function asIndexingError(error: unknown): IndexingError {
  if (error instanceof IndexingError) return error;
  return new IndexingError('source_error', (error as Error)?.message ?? String(error), { cause: error });
}

/**
 * Indexes one source: every SKILL.md of its default branch becomes (or updates, or delists) a package.
 * Runs of the same source are serialised by a Postgres advisory lock. Resolves with the summary; on
 * failure the run is recorded as failed and an IndexingError carrying `summary` is thrown
 * (`permanent` tells a job runner whether a retry can help).
 */
export async function indexSource(deps: IndexerDeps, request: IndexRequest): Promise<IndexSummary> {
  const { db, logger } = deps;
  const startedAt = new Date();
  let locator = request.locator;
  let runId: string | null = null;
  let sourceId: string | null = null;
  try {
    const source = await openSource(deps, request);
    locator = source.locator;
    sourceId = (await findSource(db, source.kind, source.locator))?.id ?? null;
    runId = await createRun(db, locator, sourceId);
    const key = `pkgreg-indexer:${source.kind}:${source.locator}`;
    const outcome = await db.connection().execute(async (conn) => {
      await lockSource(conn, key);
      try {
        return await indexLocked(conn, source, runId as string, logger);
      } finally {
        // A failed unlock must not hide the run's own error; the lock dies with the connection anyway.
        await unlockSource(conn, key).catch((error) =>
          logger?.warn({ err: error }, 'advisory unlock failed'),
        );
      }
    });
    sourceId = outcome.sourceId;
    const finishedAt = await finishRun(db, runId, {
      sourceId,
      status: 'succeeded',
      counts: outcome.counts,
      error: null,
    });
    const summary: IndexSummary = {
      runId,
      kind: request.kind,
      locator,
      sourceRepo: outcome.sourceRepo,
      status: 'succeeded',
      ...outcome.counts,
      rejections: outcome.rejections,
      notModified: outcome.notModified,
      truncated: outcome.truncated,
      error: null,
      startedAt: startedAt.toISOString(),
      finishedAt: finishedAt.toISOString(),
    };
    logger?.info({ kind: request.kind, locator, ...outcome.counts }, 'indexed source');
    return summary;
  } catch (caught) {
    const error = asIndexingError(caught) as IndexFailure;
    let finishedAt = new Date();
    try {
      runId ??= await createRun(db, locator, sourceId);
      finishedAt = await finishRun(db, runId, {
        sourceId,
        status: 'failed',
        counts: ZERO,
        error: error.message,
      });
    } catch (recordError) {
      logger?.error({ err: recordError }, 'could not record the failed indexing run');
    }
    error.summary = {
      runId,
      kind: request.kind,
      locator,
      sourceRepo: null,
      status: 'failed',
      ...ZERO,
      rejections: [],
      notModified: false,
      truncated: false,
      error: { code: error.code, message: error.message, retryAt: error.retryAt?.toISOString() ?? null },
      startedAt: startedAt.toISOString(),
      finishedAt: finishedAt.toISOString(),
    };
    logger?.warn({ kind: request.kind, locator, code: error.code, err: error.message }, 'indexing failed');
    throw error;
  }
}

/**
 * Re-indexes every known source, least recently run first. Failures are returned as failed summaries,
 * not thrown; once GitHub rate-limits us, the remaining GitHub sources are skipped (not hammered).
 */
export async function reindexAll(deps: IndexerDeps): Promise<IndexSummary[]> {
  const sources = await listSources(deps.db);
  const shared: IndexerDeps = { ...deps, githubClient: deps.githubClient ?? new GitHubClient(deps.github) };
  const summaries: IndexSummary[] = [];
  let rateLimited: IndexingError | null = null;
  for (const source of sources) {
    if (source.kind === 'github' && rateLimited) {
      const now = new Date().toISOString();
      summaries.push({
        runId: null,
        kind: source.kind,
        locator: source.locator,
        sourceRepo: source.source_repo,
        status: 'failed',
        ...ZERO,
        rejections: [],
        notModified: false,
        truncated: false,
        error: {
          code: 'rate_limited',
          message: `skipped: ${rateLimited.message}`,
          retryAt: rateLimited.retryAt?.toISOString() ?? null,
        },
        startedAt: now,
        finishedAt: now,
      });
      continue;
    }
    try {
      summaries.push(await indexSource(shared, { kind: source.kind, locator: source.locator }));
    } catch (error) {
      const failure = error as Partial<IndexFailure>;
      if (!failure.summary) throw error;
      summaries.push(failure.summary);
      if (failure.code === 'rate_limited' && source.kind === 'github') rateLimited = failure as IndexingError;
    }
  }
  return summaries;
}

/** Every source the registry has indexed (for scheduled re-indexing and the operator's `sources`). */
export async function listKnownSources(db: Db): Promise<KnownSource[]> {
  const sources = await listSources(db);
  return Promise.all(
    sources.map(async (s) => ({
      id: s.id,
      kind: s.kind,
      locator: s.locator,
      sourceRepo: s.source_repo,
      defaultBranch: s.default_branch,
      createdAt: s.created_at,
      lastRunAt: s.last_run_at,
      listedPackages: await countListedOfRepo(db, s.source_repo),
      lastRun: await lastRunOf(db, s.id),
    })),
  );
}
