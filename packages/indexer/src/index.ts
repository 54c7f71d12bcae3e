/**
 * @pkgreg/indexer: turns repositories' SKILL.md files into registry packages
 * (decisions.md, Registry / Indexing).
 *
 * Entry points (the runtime worker calls them from the BullMQ jobs of JOB_CATALOG):
 *
 * - `indexSource(deps, {kind, locator, owner?})` for `registry.index` {kind, locator}.
 *   `kind: 'github'` takes `owner/repo` (or its URL) and reads GitHub's REST API (`deps.github`:
 *   apiUrl/webUrl for GitHub Enterprise, optional token, rate-limit patience); `kind: 'git'` takes
 *   an absolute path to a local git repository and reads HEAD through the `git` CLI.
 *   Resolves with an `IndexSummary` (counts indexed/updated/unchanged/delisted/rejected and each
 *   rejection's path and reason). On failure the run is recorded and an `IndexingError` is thrown
 *   carrying `summary`; `error.permanent` says whether a retry can help (else `retryAt` may say when).
 * - `reindexAll(deps)` for `registry.reindex-all` {}: every known source, failures returned as failed
 *   summaries; GitHub sources after a rate limit are skipped, not hammered.
 * - `listKnownSources(db)`: the sources in `indexed_sources` with their last run.
 * - `seedDemo(deps, dir)`: writes the demo git repositories under `dir` and indexes them (idempotent).
 * - Publishing (docs/publishing.md): `indexSource` with `proof` (a publish or signed webhook) marks what
 *   it writes `verified`; every GitHub run binds its scope to the owner's account id (`bindScope`), so a
 *   renamed account keeps its scope and a re-registered login gets nothing. `createPublishRun` and its
 *   transitions are the record the API answers 202 with and the worker completes.
 *
 * Every file of a skill's folder is indexed: a folder whose files changed becomes a new immutable
 * version (docs/versions.md) with its manifest and archive; content is stored once per hash in a
 * `ContentStore`, so a blob the registry holds is never fetched again. A row is not rewritten unless
 * something about it changed; `downloadCount` and `firstIndexedAt` are never touched; a vanished
 * SKILL.md delists its package and a reappearing one relists it. Runs of one source are serialised
 * with a Postgres advisory lock; every run is an `indexing_runs` row.
 *
 * Dependencies (`metadata.dependencies`) are recorded per version; `dep_count` and `dependant_count`
 * are kept true by every run, and by whoever else changes a latest version or a package's visibility
 * (yanks, quarantine, removal), with `refreshDependencyState` in the same transaction.
 */

export { type DemoSeedResult, demoRepositories, seedDemo, writeDemoRepositories } from './demo-seed.js';
export { type IndexerEnv, indexerEnvShape, indexerSettings } from './env.js';
export { IndexingError, type IndexingErrorCode } from './errors.js';
export type { PreparedOutcome } from './folder-versions.js';
export { defaultLocalOwner, GitSource, type GitSourceOptions, hostedNameOf } from './git-source.js';
export {
  GitHubClient,
  GitHubSource,
  type GitHubSourceOptions,
  normalizeGitHubLocator,
} from './github-source.js';
export type { Rejection, RunCounts } from './indexer.repository.js';
export {
  type IndexerDeps,
  type IndexFailure,
  type IndexRequest,
  type IndexSummary,
  indexSource,
  type KnownSource,
  listKnownSources,
  reindexAll,
} from './indexer.service.js';
export { detectLicenseText, isLicenseFileName, spdxFromDeclared } from './license.js';
export { DEFAULT_SKILL_LIMITS, isInstalledCopy, type SkillLimits } from './skill-folders.js';
export {
  type Analysis,
  analyzeSkill,
  isValidName,
  MAX_SKILL_MD_BYTES,
  normalizeVersion,
  parseFrontmatter,
  type SkillInput,
} from './skill-md.js';
export type {
  FileMode,
  RepoMeta,
  SkillSource,
  SnapshotRequest,
  SourceKind,
  SourceSnapshot,
  TreeFile,
} from './types.js';
export { hostedSourceRepo, prepareUploadedSkill, type UploadedSkillInput } from './uploaded-skill.js';
