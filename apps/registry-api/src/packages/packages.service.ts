import { PACKAGE_NOT_FOUND_MESSAGE, type PackageDependency, type PackageDetail } from '@pkgreg/contracts';
import type { Db } from '@pkgreg/db';
import { latestDependencies, PUBLIC_ONLY, type ReadAccess } from '@pkgreg/registry';
import { notFound } from '../http/api-error.js';
import type { PackageKey } from './package-path.js';
import { findVisiblePackage, findVisibleSource, type PackageDetailRow } from './packages.repository.js';

const iso = (value: Date) => value.toISOString();

/** The 410 message for a quarantined package's bytes: its files, archive and SKILL.md. */
export function quarantinedMessage(key: PackageKey, reason: string | null): string {
  return `@${key.scope}/${key.name} is quarantined by the registry operator${reason ? `: ${reason}` : ''}`;
}

/**
 * `hidden`: dependencies left out because the reader may not read their (private) packages; depCount
 * then counts what is shown, so that no count says more than the list (docs/versions.md).
 */
export function toPackageDetail(
  row: PackageDetailRow,
  dependencies: PackageDependency[],
  hidden = 0,
): PackageDetail {
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
    // A quarantined package's bytes reach no client (issue 26): its SKILL.md is withheld like its files.
    skillMdRaw: row.quarantined_at ? '' : row.skill_md_raw,
    frontmatter: row.frontmatter,
    allowedTools: row.allowed_tools,
    tokenCount: row.token_count,
    fileCount: row.file_count,
    progressiveDisclosure: row.progressive_disclosure,
    downloadCount: Number(row.download_count),
    depCount: row.dep_count - hidden,
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
    ...recentDownloads(row),
    private: row.private,
  };
}

/** Detail's downloads of the last 7 and 30 UTC days, and the 30 days one by one (the sparkline). */
function recentDownloads(
  row: PackageDetailRow,
): Pick<PackageDetail, 'downloadsLast7Days' | 'downloadsLast30Days' | 'dailyDownloads'> {
  const counts = new Array<number>(30).fill(0);
  for (const [day, count] of row.daily_downloads ?? []) counts[day] = Number(count);
  const sum = (values: number[]) => values.reduce((total, n) => total + n, 0);
  return {
    downloadsLast7Days: sum(counts.slice(-7)),
    downloadsLast30Days: sum(counts),
    dailyDownloads: { from: row.daily_from, counts },
  };
}

/** A representation of one package plus the validator its ETag is built from. */
export interface Versioned<T> {
  value: T;
  /** The package is private (answers to it are never stored by a shared cache). */
  private: boolean;
  /** Dependencies on private packages were left out for this reader: another reader may see more. */
  hidesDependencies: boolean;
  /**
   * `<id>.<row_version>.<day>`: row_version is bumped by trigger on every update, so it follows the row;
   * the UTC day, because the downloads of the last days move with it.
   */
  version: string;
}

async function requireVisible(db: Db, key: PackageKey, access: ReadAccess): Promise<PackageDetailRow> {
  const row = await findVisiblePackage(db, key.scope, key.name, access);
  // decisions.md: Registry / Status: delisted packages 404 exactly like missing ones; so do private
  // packages to readers that may not read them (the same query, the same answer).
  if (!row) throw notFound(PACKAGE_NOT_FOUND_MESSAGE);
  return row;
}

export async function getPackageDetail(
  db: Db,
  key: PackageKey,
  access: ReadAccess = PUBLIC_ONLY,
): Promise<Versioned<PackageDetail>> {
  const row = await requireVisible(db, key, access);
  // Whether each resolves reads other packages: the indexer moves this row's version when they change.
  const { dependencies, hidden } = await latestDependencies(
    db,
    { id: row.id, version: row.version, depCount: row.dep_count },
    access,
  );
  return {
    value: toPackageDetail(row, dependencies, hidden),
    version: `${row.id}.${row.row_version}.${row.epoch_day}`,
    private: row.private,
    hidesDependencies: hidden > 0,
  };
}

/**
 * decisions.md: Registry: `{codeHost}/{sourceRepo}/tree/{sourceRef}/{sourcePath}`, the repository root
 * when sourcePath is empty; a hosted package's SKILL.md in the registry (docs/publishing.md). Path segments are encoded one by one so `/` stays a separator.
 */
export async function getSourceUrl(
  db: Db,
  key: PackageKey,
  codeHostWebUrl: string,
  access: ReadAccess,
): Promise<string> {
  const row = await findVisibleSource(db, key.scope, key.name, access);
  if (!row) throw notFound(PACKAGE_NOT_FOUND_MESSAGE);
  // A hosted package's source is the registry's own copy: its latest version's SKILL.md.
  if (row.hosted) {
    const version = encodeURIComponent(row.version ?? 'latest');
    return `/api/packages/@${encodeURIComponent(key.scope)}/${encodeURIComponent(key.name)}/versions/${version}/files/SKILL.md`;
  }
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
