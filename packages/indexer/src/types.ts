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
  /** The code host's numeric id of the owner account (survives renames); absent for local git. */
  ownerId?: number | null;
  /** The code host's numeric id of the repository (survives renames and transfers); absent for local git. */
  repositoryId?: number | null;
}

import type { FileMode } from '@pkgreg/registry';

export type { FileMode };

/** One file of the repository's tree at the indexed ref (submodules are not files and are left out). */
export interface TreeFile {
  /** Path from the repository root, `/`-separated. */
  path: string;
  /** Git blob SHA-1. */
  sha: string;
  /** Size in bytes when the source knows it. */
  size: number | null;
  mode: FileMode;
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
  /** The commit the tree was read at, when the source says (recorded on each new version). */
  commit: string | null;
  /**
   * That commit's committer date, when the source says: with `commit`, it names the run's
   * pseudo-versions (docs/versions.md).
   */
  commitTime: Date | null;
  /** ETags to keep for the next run. */
  etags: Record<string, string>;
  /** The branch read when it is not the default one (a publish asked for it). */
  branch?: string;
}

/**
 * A place skills are read from. `snapshot` lists the tree once per run; `readBlobs` is only called for
 * blobs the registry does not hold yet (by git SHA), so unchanged files cost nothing.
 */
export interface SkillSource {
  readonly kind: SourceKind;
  /** Normalised locator, the identity of the source in `indexed_sources`. */
  readonly locator: string;
  snapshot(request: SnapshotRequest): Promise<SourceSnapshot>;
  /**
   * The bytes of each blob of the last snapshot, by git SHA, checked against it. Sources read many at
   * once (one `git cat-file`, or one tarball), not one request per file.
   */
  readBlobs(shas: string[]): Promise<Map<string, Buffer>>;
}

/** True for the modes of files a skill can hold (not trees, not submodules). */
export function isFileMode(mode: string | undefined): mode is FileMode {
  return mode === '100644' || mode === '100755' || mode === '120000';
}
