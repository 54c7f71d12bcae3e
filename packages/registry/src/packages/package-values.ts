import type { PackageKind, PackageListItem } from '@pkgreg/contracts';
import type { DeclaredDependency } from '../dependencies/declared-dependencies.js';

// What a source hands the registry for one package: the values its SKILL.md gives (the indexer derives
// them) and what its folder and versions decide.

/** Every column an indexing run owns, derived from one SKILL.md. */
export interface DerivedPackage {
  scope: string;
  name: string;
  description: string;
  kind: PackageKind;
  category: string | null;
  tags: string[];
  compatibility: string[];
  language: string | null;
  /** The semver the SKILL.md declares (`version`, else `metadata.version`), normalised; else null. */
  declaredVersion: string | null;
  sourceRepo: string;
  sourcePath: string;
  sourceRef: string;
  repoUrl: string | null;
  homepageUrl: string | null;
  repoOwner: string;
  author: string | null;
  repoStars: number;
  /** The frontmatter's license as an SPDX expression; null when it names none (files decide then). */
  declaredLicense: string | null;
  skillMdRaw: string;
  frontmatter: Record<string, unknown>;
  allowedTools: string[];
  tokenCount: number;
  fileCount: number;
  progressiveDisclosure: boolean;
  status: 'active' | 'deprecated';
  /** What `metadata.dependencies` declares (entries that cannot be read are left out, with warnings). */
  dependencies: DeclaredDependency[];
  lastCommitSha: string;
  /** Rules agents tolerate that this SKILL.md breaks. */
  warnings: string[];
}

/** A package row's indexer-owned values: the SKILL.md's fields plus what the folder and versions decide. */
export type IndexedPackage = DerivedPackage & {
  /** The latest version's string (the newest not yanked); null when every version is yanked. */
  version: string | null;
  license: string | null;
  warnings: string[];
};

/** The columns of a package as list pages and dependants show it. */
export interface ListItemRow {
  scope: string;
  name: string;
  description: string;
  kind: PackageKind;
  source_repo: string;
  repo_owner: string;
  repo_stars: number;
  license: string | null;
  last_indexed_at: Date;
  risk: 'none' | 'low' | 'medium' | 'high' | null;
  /** packages.private, when the query selects it. */
  private?: boolean;
}

export function toPackageListItem(row: ListItemRow): PackageListItem {
  return {
    scope: row.scope,
    name: row.name,
    description: row.description,
    kind: row.kind,
    sourceRepo: row.source_repo,
    repoOwner: row.repo_owner,
    repoStars: row.repo_stars,
    license: row.license ?? '',
    lastIndexedAt: row.last_indexed_at.toISOString(),
    risk: row.risk,
    ...(row.private === undefined ? {} : { private: row.private }),
  };
}
