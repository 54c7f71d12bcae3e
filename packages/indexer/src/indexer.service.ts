import type { Db } from '@pkgreg/db';
import type { Logger } from 'pino';
import { type ContentStore, createPgContentStore } from './content-store.js';
import { IndexingError, type IndexingErrorCode } from './errors.js';
import { type PreparedSkill, prepareSkills } from './folder-versions.js';
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
  type IndexedPackage,
  insertPackage,
  insertRejections,
  insertVersion,
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
  versionHistories,
} from './indexer.repository.js';
import { isLicenseFileName } from './license.js';
import { DEFAULT_SKILL_LIMITS, limitProblem, type SkillLimits, skillFoldersOf } from './skill-folders.js';
import { sanitizeScope } from './skill-md.js';
import type { RepoMeta, SkillSource, SourceKind, TreeFile } from './types.js';
import { chooseVersion } from './versioning.js';

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
}

/** A version a run created. */
export interface NewVersionSummary {
  /** `@scope/name`. */
  name: string;
  version: string;
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
  counts: RunCounts;
  rejections: Rejection[];
  versions: NewVersionSummary[];
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
}

async function indexLocked(ctx: RunContext, runId: string): Promise<LockedOutcome> {
  const { conn, source } = ctx;
  // Read under the lock: a run that held it before us may have moved the ETags on.
  const known = await findSource(conn, source.kind, source.locator);
  const includeHidden = ctx.includeHidden || (known?.include_hidden ?? false);
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
    includeHidden,
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
      versions: [],
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
    repo: snap.repo,
    scope,
    sourceRepo,
    latestDigest: (name) => histories.get(idByName.get(`${scope}/${name}`) ?? '')?.latestDigest,
  });
  for (const outcome of outcomes) {
    if (outcome.ok) prepared.push(outcome.skill);
    else rejections.push({ path: outcome.path, reason: outcome.reason });
  }

  const { sourceId, written } = await conn.transaction().execute(async (trx) => {
    const result = await writePackages(trx, {
      names,
      prepared,
      rejections,
      snapshotCommit: snap.commit,
      truncated: snap.truncated,
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
    counts: written.counts,
    rejections,
    versions: written.versions,
    notModified: false,
    truncated: snap.truncated,
  };
}

interface WriteInput {
  names: string[];
  prepared: PreparedSkill[];
  /** Appended to: duplicates, collisions, operator removals. */
  rejections: Rejection[];
  snapshotCommit: string | null;
  truncated: boolean;
}

/** The run's package rows and new versions, in one transaction: a failure leaves none of them. */
async function writePackages(
  trx: Db,
  input: WriteInput,
): Promise<{ counts: RunCounts; versions: NewVersionSummary[] }> {
  const { prepared, rejections } = input;
  const now = new Date();
  const rows = await packagesOfRepo(trx, input.names);
  const byName = new Map(rows.map((r) => [`${r.scope}/${r.name}`, r]));
  const histories = await versionHistories(
    trx,
    rows.map((r) => r.id),
  );
  const counts: RunCounts = { ...ZERO };
  const versions: NewVersionSummary[] = [];
  const claimedBy = new Map<string, string>();
  const kept = new Set<string>();
  for (const skill of prepared) {
    const { pkg } = skill;
    const key = `${pkg.scope}/${pkg.name}`;
    const earlier = claimedBy.get(key);
    if (earlier) {
      rejections.push({
        path: skill.path,
        reason: `duplicate name "${pkg.name}": also defined by ${earlier}`,
      });
      continue;
    }
    const row = byName.get(key);
    if (row?.removed_at) {
      claimedBy.set(key, skill.path);
      kept.add(row.id);
      rejections.push({ path: skill.path, reason: `@${key} was removed by the registry operator` });
      continue;
    }
    const history = row ? histories.get(row.id) : undefined;
    const changed = history?.latestDigest !== skill.digest;
    const version = changed
      ? chooseVersion({
          declared: pkg.declaredVersion,
          used: history?.used ?? new Set(),
          lastDeclared: history?.lastDeclared ?? null,
          time: now,
          digest: skill.digest,
        })
      : (history?.latestVersion as string);
    const values: IndexedPackage = { ...pkg, version, license: skill.license, warnings: skill.warnings };
    let packageId: string;
    if (row) {
      packageId = row.id;
      if (!changed && rowMatches(row, values)) counts.unchanged += 1;
      else {
        await updatePackage(trx, row.id, values, now);
        if (row.status === 'delisted') counts.indexed += 1;
        else counts.updated += 1;
      }
    } else {
      const id = await insertPackage(trx, values, now);
      if (!id) {
        // (scope, name) belongs to another repository of the same owner: first come keeps it.
        const holder = await findPackage(trx, pkg.scope, pkg.name);
        rejections.push({
          path: skill.path,
          reason: `name collision: @${key} is already provided by ${holder?.source_repo ?? 'another repository'}`,
        });
        continue;
      }
      packageId = id;
      counts.indexed += 1;
    }
    claimedBy.set(key, skill.path);
    kept.add(packageId);
    if (changed) {
      if (!skill.archive) throw new IndexingError('source_error', `no archive was built for @${key}`);
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
          warnings: skill.warnings,
          manifest: skill.manifest,
          scan: skill.scan,
        },
        now,
      );
      versions.push({ name: `@${key}`, version });
    }
  }
  if (!input.truncated) {
    const gone = rows.filter((r) => r.status !== 'delisted' && !kept.has(r.id)).map((r) => r.id);
    await delistPackages(trx, gone, now);
    counts.delisted = gone.length;
  }
  return { counts, versions };
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
        return await indexLocked(
          {
            conn,
            source,
            store: deps.store ?? createPgContentStore(conn),
            limits: { ...DEFAULT_SKILL_LIMITS, ...deps.limits },
            includeHidden: request.includeHidden ?? false,
            logger,
          },
          runId as string,
        );
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
      versions: outcome.versions,
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
      versions: [],
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
        versions: [],
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
