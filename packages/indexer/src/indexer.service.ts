import type { PublishProof, SkillResult } from '@pkgreg/contracts';
import type { Db } from '@pkgreg/db';
import {
  bindScope,
  type ContentStore,
  countListedOfRepo,
  createPgContentStore,
  decideScope,
  holdBlobWriters,
  listedOfRepo,
  type NewVersionSummary,
  packagesOfRepo,
  type Rejection,
  type RunCounts,
  releaseBlobWriters,
  ScopeTakenError,
  sanitizeScope,
  setVerified,
  skillMdPath,
  versionHistories,
  writePreparedVersions,
  ZERO_COUNTS,
} from '@pkgreg/registry';
import type { Logger } from 'pino';
import { IndexingError, type IndexingErrorCode } from './errors.js';
import { type PreparedSkill, prepareSkills } from './folder-versions.js';
import { GitSource } from './git-source.js';
import {
  GitHubClient,
  GitHubSource,
  type GitHubSourceOptions,
  normalizeGitHubLocator,
} from './github-source.js';
import {
  createRun,
  findOtherSourceOfRepo,
  findSource,
  findSourceByRepositoryId,
  finishRun,
  insertRejections,
  lastRejections,
  lastRunOf,
  listSources,
  lockSource,
  moveSourceLocator,
  type SourceRow,
  saveSource,
  unlockSource,
} from './indexer.repository.js';
import { isLicenseFileName } from './license.js';
import { DEFAULT_SKILL_LIMITS, limitProblem, type SkillLimits, skillFoldersOf } from './skill-folders.js';
import type { RepoMeta, SkillSource, SourceKind, TreeFile } from './types.js';

export interface IndexerDeps {
  db: Db;
  /** Where file bytes and archives go; default: PostgreSQL's content_blobs. */
  store?: ContentStore;
  /** Size limits of a skill (default DEFAULT_SKILL_LIMITS). */
  limits?: Partial<SkillLimits>;
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
  /**
   * Local git only: the scope; default the stored one, else the code-host owner of `origin`, else the
   * parent directory's name, else `local`.
   */
  owner?: string;
  /**
   * Index SKILL.md files under hidden folders and node_modules too (installed copies, skipped by
   * default). Remembered for the source's later runs.
   */
  includeHidden?: boolean;
  /**
   * GitHub: the branch to index, remembered for the source's later runs; null goes back to the default
   * branch; undefined keeps what the source remembers.
   */
  ref?: string | null;
  /**
   * How the caller proved control of the repository (publish, signed webhook). A proven run binds the
   * scope as published and marks what it writes `verified`; a crawl (none) marks new versions unverified.
   */
  proof?: PublishProof;
  /** The account id the proof named: the repository must still belong to it when it is read. */
  expectedOwnerId?: number;
  /**
   * GitHub: the repository id the proof covers. The repository is read by this id (a rename or transfer
   * is followed; the locator is only its last known name) and a run that finds another is refused.
   */
  expectedRepositoryId?: number;
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
  /** Versions this run created (a package whose folder did not change gets none). */
  versions: NewVersionSummary[];
  /** Per SKILL.md: new version, unchanged, rejected or delisted, with its warnings and reason. */
  skills: SkillResult[];
  /** The scope the packages were written under (a renamed account keeps its first scope). */
  scope: string | null;
  /** Commit the tree was read at, when the source said. */
  commit: string | null;
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

function parseRepoMeta(value: unknown): RepoMeta | null {
  const meta = value as Partial<RepoMeta> | null;
  if (!meta || typeof meta.owner !== 'string' || typeof meta.defaultBranch !== 'string') return null;
  return meta as RepoMeta;
}

async function openSource(deps: IndexerDeps, request: IndexRequest): Promise<SkillSource> {
  if (request.kind === 'github') {
    const locator = normalizeGitHubLocator(request.locator);
    const branch =
      request.ref === undefined ? (await findSource(deps.db, 'github', locator))?.ref : request.ref;
    return new GitHubSource(locator, deps.githubClient ?? new GitHubClient(deps.github), {
      ...(branch ? { branch } : {}),
      ...(request.expectedRepositoryId !== undefined ? { repositoryId: request.expectedRepositoryId } : {}),
    });
  }
  if (request.kind !== 'git') {
    throw new IndexingError('invalid_locator', `unknown source kind "${String(request.kind)}"`);
  }
  const webUrl = deps.github?.webUrl;
  const source = await GitSource.open(request.locator, { owner: request.owner, webUrl });
  if (request.owner !== undefined) return source;
  // Re-index keeps the scope the repository was first indexed under.
  const stored = await findSource(deps.db, 'git', source.locator);
  const storedOwner = stored?.source_repo.split('/')[0];
  if (storedOwner && sanitizeScope(storedOwner) !== source.owner)
    return GitSource.open(source.locator, { owner: storedOwner, webUrl });
  return source;
}

interface LockedOutcome {
  sourceId: string;
  sourceRepo: string;
  scope: string;
  commit: string | null;
  counts: RunCounts;
  rejections: Rejection[];
  versions: NewVersionSummary[];
  skills: SkillResult[];
  notModified: boolean;
  truncated: boolean;
}

/** LICENSE-like files at the repository root (a skill without its own license inherits theirs). */
function rootLicenseFiles(files: TreeFile[]): TreeFile[] {
  return files.filter((f) => !f.path.includes('/') && isLicenseFileName(f.path));
}

interface RunContext {
  conn: Db;
  source: SkillSource;
  store: ContentStore;
  limits: SkillLimits;
  includeHidden: boolean;
  logger: Logger | undefined;
  request: IndexRequest;
}

/**
 * The source's row under this locator, else (GitHub) under the repository's id: a repository published
 * under its new name after a rename or transfer keeps its source, which takes the new locator.
 */
async function knownSource(
  conn: Db,
  source: SkillSource,
  repositoryId: number | null | undefined,
): Promise<SourceRow | undefined> {
  const byLocator = await findSource(conn, source.kind, source.locator);
  if (byLocator || source.kind !== 'github' || typeof repositoryId !== 'number') return byLocator;
  const byId = await findSourceByRepositoryId(conn, repositoryId);
  if (byId) await moveSourceLocator(conn, byId.id, source.locator);
  return byId ? { ...byId, locator: source.locator } : undefined;
}

/**
 * The scope a run writes under: for a code-host repository, the one bound to its owner's account id
 * (a renamed account keeps its scope; a login re-registered by another account is refused); for a
 * local git repository, which has no account id, the name chosen for it (docs/publishing.md).
 */
async function scopeOf(ctx: RunContext, repo: RepoMeta): Promise<string> {
  const named = sanitizeScope(repo.owner);
  if (!named)
    throw new IndexingError('invalid_locator', `owner "${repo.owner}" cannot be made a valid scope`);
  const ownerId = repo.ownerId;
  if (ctx.source.kind !== 'github' || typeof ownerId !== 'number') return named;
  const expectedRepository = ctx.request.expectedRepositoryId;
  if (expectedRepository !== undefined && repo.repositoryId !== expectedRepository) {
    throw new IndexingError(
      'forbidden',
      `the code host answered repository ${repo.repositoryId ?? 'without an id'} (${repo.owner}/${repo.name}), not ${expectedRepository} that the proof named`,
    );
  }
  const expected = ctx.request.expectedOwnerId;
  if (expected !== undefined && expected !== ownerId) {
    throw new IndexingError(
      'forbidden',
      `${repo.owner}/${repo.name} now belongs to account ${ownerId}, not ${expected} that the proof named`,
    );
  }
  const decision = await decideScope(ctx.conn, { scope: named, ownerId, login: repo.owner });
  if (!decision.ok) throw new IndexingError('forbidden', decision.message);
  return decision.scope;
}

function rejectedResults(rejections: Rejection[]): SkillResult[] {
  return rejections.map((r) => ({
    path: r.path,
    name: null,
    outcome: 'rejected',
    version: null,
    warnings: [],
    reason: r.reason,
  }));
}

const byPath = (a: { path: string }, b: { path: string }) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0);

async function indexLocked(ctx: RunContext, runId: string): Promise<LockedOutcome> {
  const { conn, source } = ctx;
  // Read under the lock: a run that held it before us may have moved the ETags on.
  let known = await findSource(conn, source.kind, source.locator);
  const includeHidden = ctx.includeHidden || (known?.include_hidden ?? false);
  const snap = await source.snapshot({
    etags: known?.etags ?? {},
    cachedMeta: known ? parseRepoMeta(known.repo_meta) : null,
  });
  const scope = await scopeOf(ctx, snap.repo);
  // A webhook proves one repository (by id): the source row its locator names must be that repository,
  // never another one that holds the name now.
  const knownId = known?.repository_id;
  if (ctx.request.proof === 'webhook' && typeof knownId === 'number' && knownId !== snap.repo.repositoryId) {
    throw new IndexingError(
      'conflict',
      `${source.locator} is indexed as repository ${knownId}; this webhook is for repository ${snap.repo.repositoryId ?? 'without an id'}`,
    );
  }
  known ??= await knownSource(conn, source, snap.repo.repositoryId);
  const sourceRepo = `${snap.repo.owner}/${snap.repo.name}`;
  const ownerId = snap.repo.ownerId;
  const claim =
    source.kind === 'github' && typeof ownerId === 'number'
      ? { scope: sanitizeScope(snap.repo.owner) ?? scope, ownerId, login: snap.repo.owner }
      : null;
  const boundBy = ctx.request.proof === 'oidc' || ctx.request.proof === 'token' ? 'publish' : 'index';
  // The branch indexed is the source's `sourceRef` (packages record it; the source remembers it).
  const repoForSkills = snap.branch ? { ...snap.repo, defaultBranch: snap.branch } : snap.repo;
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
    includeHidden,
    ref: snap.branch ?? null,
    repositoryId: snap.repo.repositoryId ?? null,
  };

  if (snap.files === null) {
    const { sourceId, listed } = await conn.transaction().execute(async (trx) => {
      if (claim) await bindScope(trx, claim, boundBy);
      const id = await saveSource(trx, sourceValues);
      const rows = await listedOfRepo(trx, sourceRepo);
      // A proven run confirms the latest versions it finds unchanged (docs/publishing.md, verified).
      if (ctx.request.proof) {
        const ids = (await packagesOfRepo(trx, [sourceRepo])).filter((r) => r.status !== 'delisted');
        await setVerified(
          trx,
          ids.map((r) => r.id),
          true,
        );
      }
      return { sourceId: id, listed: rows };
    });
    const rejections = known ? await lastRejections(conn, known.id) : [];
    await insertRejections(conn, runId, rejections);
    const skills: SkillResult[] = [
      ...listed.map(
        (row): SkillResult => ({
          path: skillMdPath(row.source_path),
          name: `@${row.scope}/${row.name}`,
          outcome: 'unchanged',
          version: row.version,
          warnings: row.warnings,
          reason: null,
        }),
      ),
      ...rejectedResults(rejections),
    ].sort(byPath);
    return {
      sourceId,
      sourceRepo,
      scope,
      commit: snap.commit,
      counts: { ...ZERO_COUNTS, unchanged: listed.length, rejected: rejections.length },
      rejections,
      versions: [],
      skills,
      notModified: true,
      truncated: false,
    };
  }

  // Under its previous name too: a renamed or transferred repository keeps its packages.
  const names = [...new Set([sourceRepo, known?.source_repo ?? sourceRepo])];
  const before = await packagesOfRepo(conn, names);
  const histories = await versionHistories(
    conn,
    before.map((r) => r.id),
  );
  const idByName = new Map(before.map((r) => [`${r.scope}/${r.name}`, r.id]));

  const rejections: Rejection[] = [];
  const folders = skillFoldersOf(snap.files, { includeHidden }).filter((folder) => {
    const problem = limitProblem(folder, ctx.limits);
    if (problem) rejections.push({ path: folder.skillMd.path, reason: problem });
    return problem === null;
  });
  const prepared: PreparedSkill[] = [];
  const outcomes = await prepareSkills({
    source,
    store: ctx.store,
    folders,
    rootLicenseFiles: rootLicenseFiles(snap.files),
    repo: repoForSkills,
    scope,
    sourceRepo,
    latestDigest: (name) => histories.get(idByName.get(`${scope}/${name}`) ?? '')?.latestDigest,
  });
  for (const outcome of outcomes) {
    if (outcome.ok) prepared.push(outcome.skill);
    else rejections.push({ path: outcome.path, reason: outcome.reason });
  }

  const { sourceId, written } = await conn.transaction().execute(async (trx) => {
    if (claim) await bindScope(trx, claim, boundBy);
    const result = await writePreparedVersions(trx, {
      names,
      prepared,
      rejections,
      snapshotCommit: snap.commit,
      snapshotCommitTime: snap.commitTime,
      truncated: snap.truncated,
      indexingRunId: runId,
      proven: ctx.request.proof !== undefined,
    });
    rejections.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
    result.counts.rejected = rejections.length;
    const id = await saveSource(trx, sourceValues);
    await insertRejections(trx, runId, rejections);
    return { sourceId: id, written: result };
  });
  if (snap.truncated)
    ctx.logger?.warn({ sourceRepo }, 'tree listing truncated by the host; nothing delisted');
  return {
    sourceId,
    sourceRepo,
    scope,
    commit: snap.commit,
    counts: written.counts,
    rejections,
    versions: written.versions,
    skills: [
      ...written.skills,
      ...rejectedResults(rejections.filter((r) => !written.skills.some((k) => k.path === r.path))),
    ].sort(byPath),
    notModified: false,
    truncated: snap.truncated,
  };
}

function asIndexingError(error: unknown): IndexingError {
  if (error instanceof IndexingError) return error;
  // A scope bound to another account between the run's decision and its write: as refused as before.
  if (error instanceof ScopeTakenError) return new IndexingError('forbidden', error.message);
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
        // Until the versions commit, the blob collector waits (content-store.ts says why that is safe).
        await holdBlobWriters(conn);
        return await indexLocked(
          {
            conn,
            source,
            store: deps.store ?? createPgContentStore(conn),
            limits: { ...DEFAULT_SKILL_LIMITS, ...deps.limits },
            includeHidden: request.includeHidden ?? false,
            logger,
            request,
          },
          runId as string,
        );
      } finally {
        // A failed unlock must not hide the run's own error; the lock dies with the connection anyway.
        await releaseBlobWriters(conn)
          .then(() => unlockSource(conn, key))
          .catch((error) => logger?.warn({ err: error }, 'advisory unlock failed'));
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
      versions: outcome.versions,
      skills: outcome.skills,
      scope: outcome.scope,
      commit: outcome.commit,
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
        counts: ZERO_COUNTS,
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
      ...ZERO_COUNTS,
      rejections: [],
      versions: [],
      skills: [],
      scope: null,
      commit: null,
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
        ...ZERO_COUNTS,
        rejections: [],
        versions: [],
        skills: [],
        scope: null,
        commit: null,
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
