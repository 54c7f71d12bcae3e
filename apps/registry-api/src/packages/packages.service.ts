import {
  type ListQuery,
  type ListResponse,
  PACKAGE_NOT_FOUND_MESSAGE,
  type PackageDependency,
  type PackageDetail,
  type PackageListItem,
} from '@pkgreg/contracts';
import type { Db } from '@pkgreg/db';
import { latestDependencies } from '../dependencies/dependencies.service.js';
import { notFound } from '../http/api-error.js';
import type { PackageKey } from './package-path.js';
import {
  countRanked,
  findVisiblePackage,
  findVisibleSource,
  type ListRankColumn,
  listPageByRank,
  type PackageDetailRow,
} from './packages.repository.js';

const iso = (value: Date) => value.toISOString();

export function toPackageDetail(row: PackageDetailRow, dependencies: PackageDependency[]): PackageDetail {
  return {
    id: row.id,
    scope: row.scope,
    name: row.name,
    description: row.description,
    kind: row.kind,
    category: row.category,
    tags: row.tags,
    compatibility: row.compatibility,
    language: row.language,
    version: row.version,
    sourceRepo: row.source_repo,
    sourcePath: row.source_path,
    sourceRef: row.source_ref,
    repoUrl: row.repo_url,
    homepageUrl: row.homepage_url,
    repoOwner: row.repo_owner,
    author: row.author,
    repoStars: row.repo_stars,
    license: row.license,
    skillMdRaw: row.skill_md_raw,
    frontmatter: row.frontmatter,
    allowedTools: row.allowed_tools,
    tokenCount: row.token_count,
    fileCount: row.file_count,
    progressiveDisclosure: row.progressive_disclosure,
    downloadCount: Number(row.download_count),
    depCount: row.dep_count,
    dependantCount: row.dependant_count,
    verified: row.verified,
    featured: row.featured,
    // The operator's quarantine shows over the author's status (docs/risk-scan.md).
    status: row.quarantined_at ? 'quarantined' : row.status,
    hosted: row.hosted,
    firstIndexedAt: iso(row.first_indexed_at),
    lastIndexedAt: iso(row.last_indexed_at),
    lastCommitSha: row.last_commit_sha,
    warnings: row.warnings,
    risk: row.risk,
    findings: (row.findings ?? []) as PackageDetail['findings'],
    quarantineReason: row.quarantined_at ? row.quarantine_reason : null,
    deprecationMessage: row.deprecation_message,
    dependencies,
  };
}

/** A representation of one package plus the validator its ETag is built from. */
export interface Versioned<T> {
  value: T;
  /** `<id>.<row_version>`: row_version is bumped by trigger on every update, so it follows the row. */
  version: string;
}

async function requireVisible(db: Db, key: PackageKey): Promise<PackageDetailRow> {
  const row = await findVisiblePackage(db, key.scope, key.name);
  // decisions.md: Registry / Status: delisted packages 404 exactly like missing ones.
  if (!row) throw notFound(PACKAGE_NOT_FOUND_MESSAGE);
  return row;
}

export async function getPackageDetail(db: Db, key: PackageKey): Promise<Versioned<PackageDetail>> {
  const row = await requireVisible(db, key);
  // Whether each resolves reads other packages: the indexer moves this row's version when they change.
  const dependencies = await latestDependencies(db, {
    id: row.id,
    version: row.version,
    depCount: row.dep_count,
  });
  return { value: toPackageDetail(row, dependencies), version: `${row.id}.${row.row_version}` };
}

/**
 * decisions.md: Registry: `{codeHost}/{sourceRepo}/tree/{sourceRef}/{sourcePath}`, the repository root
 * when sourcePath is empty. Path segments are encoded one by one so `/` stays a separator.
 */
export async function getSourceUrl(db: Db, key: PackageKey, codeHostWebUrl: string): Promise<string> {
  const row = await findVisibleSource(db, key.scope, key.name);
  if (!row) throw notFound(PACKAGE_NOT_FOUND_MESSAGE);
  const base = codeHostWebUrl.replace(/\/+$/, '');
  const encode = (path: string) =>
    path
      .split('/')
      .filter((segment) => segment.length > 0)
      .map(encodeURIComponent)
      .join('/');
  const repo = encode(row.source_repo);
  const sourcePath = encode(row.source_path);
  if (!sourcePath) return `${base}/${repo}`;
  return `${base}/${repo}/tree/${encode(row.source_ref)}/${sourcePath}`;
}

const RANK_COLUMNS: Record<ListQuery['sort'], Record<ListQuery['order'], ListRankColumn>> = {
  name: { asc: 'name_asc', desc: 'name_desc' },
  stars: { asc: 'stars_asc', desc: 'stars_desc' },
  indexed: { asc: 'indexed_asc', desc: 'indexed_desc' },
};

/** List positions are int4: a page starting past the last one holds nothing (and Postgres refuses the bound). */
const MAX_RANK = 2_147_483_647;

export async function listPackages(db: Db, query: ListQuery): Promise<ListResponse> {
  const from = (query.page - 1) * query.pageSize + 1;
  const to = Math.min(from + query.pageSize - 1, MAX_RANK);
  const [rows, total] = await Promise.all([
    from > MAX_RANK ? [] : listPageByRank(db, RANK_COLUMNS[query.sort][query.order], from, to),
    countRanked(db),
  ]);
  const data: PackageListItem[] = rows.map((row) => ({
    scope: row.scope,
    name: row.name,
    description: row.description,
    kind: row.kind,
    sourceRepo: row.source_repo,
    repoOwner: row.repo_owner,
    repoStars: row.repo_stars,
    license: row.license ?? '',
    lastIndexedAt: iso(row.last_indexed_at),
    risk: row.risk,
  }));
  return { data, total, page: query.page, pageSize: query.pageSize };
}
