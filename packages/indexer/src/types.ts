/** Where packages come from: a repository on a GitHub(-compatible) host, or a local git repository. */
export type SourceKind = 'github' | 'git';

/** Repository-level facts every package of the repository shares. */
export interface RepoMeta {
  /** Repository owner as the host spells it. */
  owner: string;
  /** Repository name as the host spells it. */
  name: string;
  defaultBranch: string;
  stars: number;
  /** SPDX id of the repository license; null when none or not asserted. */
  license: string | null;
  homepageUrl: string | null;
  repoUrl: string | null;
}

/** One file of the repository's tree at the indexed ref. */
export interface TreeFile {
  /** Path from the repository root, `/`-separated. */
  path: string;
  /** Git blob SHA-1. */
  sha: string;
  /** Size in bytes when the source knows it. */
  size: number | null;
}

export interface SnapshotRequest {
  /** ETags kept from the previous run (opaque to the caller). */
  etags: Record<string, string>;
  /** Repository metadata kept from the previous run (used when the host answers 304). */
  cachedMeta: RepoMeta | null;
}

export interface SourceSnapshot {
  repo: RepoMeta;
  /** Every file of the tree; null when the host says the tree is unchanged since `etags` (304). */
  files: TreeFile[] | null;
  /** True when the listing is incomplete (the host truncated it): nothing may be delisted. */
  truncated: boolean;
  /** ETags to keep for the next run. */
  etags: Record<string, string>;
}

/**
 * A place SKILL.md files are read from. `snapshot` lists the tree once per run; `readBlob` is only
 * called for blobs whose SHA the registry has not stored yet, so unchanged files cost nothing.
 */
export interface SkillSource {
  readonly kind: SourceKind;
  /** Normalised locator, the identity of the source in `indexed_sources`. */
  readonly locator: string;
  snapshot(request: SnapshotRequest): Promise<SourceSnapshot>;
  readBlob(sha: string): Promise<string>;
  /** Optional bulk form of readBlob (one round trip for many blobs); absent ones are read one by one. */
  readBlobs?(shas: string[]): Promise<Map<string, string>>;
}
