import {
  FILE_NOT_FOUND_MESSAGE,
  INVALID_FILE_PATH_MESSAGE,
  INVALID_VERSION_MESSAGE,
  LATEST_VERSION,
  normalizeSkillFilePath,
  PACKAGE_NOT_FOUND_MESSAGE,
  VERSION_NOT_FOUND_MESSAGE,
  type VersionAttestationsResponse,
  type VersionDetail,
  type VersionListQuery,
  type VersionListResponse,
  type VersionSummary,
} from '@pkgreg/contracts';
import type { Db } from '@pkgreg/db';
import {
  type AgentSkillArchiveForm,
  attestationsOf,
  canRead,
  countVersions,
  findExactArchiveRow,
  findPackageForVersions,
  findVersionFile,
  findVersionRow,
  listVersionFiles,
  listVersionRows,
  logIndexOf,
  type ReadAccess,
  signaturesOf,
  type VersionedPackageRow,
  type VersionRow,
  versionDependencies,
} from '@pkgreg/registry';
import semver from 'semver';
import { ApiError, badRequest, gone, notFound } from '../http/api-error.js';
import type { PackageKey } from '../packages/package-path.js';
import { quarantinedMessage } from '../packages/packages.service.js';
import { type AgentSkillArchives, sha256Digest } from '../well-known/agent-skill-archives.js';
import type { ContentCache } from './content-cache.js';

// The rules of docs/versions.md, "API": which versions are visible, `latest`, and 400/404/410.

/** `{version}` of a path: an exact semver version, or null for `latest`. */
export interface VersionRef {
  exact: string | null;
}

export function parseVersionParam(value: string): VersionRef {
  if (value === LATEST_VERSION) return { exact: null };
  const exact = semver.valid(value);
  if (!exact || value.length > 256) throw badRequest(INVALID_VERSION_MESSAGE);
  return { exact };
}

/** The path below `files/`, as Express split it: one relative path inside the folder, or a 400. */
export function parseFilePath(segments: string[] | string | undefined): string {
  const joined = Array.isArray(segments) ? segments.join('/') : (segments ?? '');
  const path = normalizeSkillFilePath(joined);
  if (path === null) throw badRequest(INVALID_FILE_PATH_MESSAGE);
  return path;
}

/**
 * The package whose versions are asked for. `latest` and the list follow detail (a delisted package
 * is not found); exact versions stay fetchable while a package is delisted, so lockfiles keep working.
 * An operator removal is 410 for everything.
 */
async function requirePackage(
  db: Db,
  key: PackageKey,
  exactOnly: boolean,
  access: ReadAccess,
): Promise<VersionedPackageRow> {
  const row = await findPackageForVersions(db, key.scope, key.name);
  // A private package the reader may not read does not exist for it, removed or not (docs/accounts.md).
  if (!row || !canRead(access, { ...key, private: row.private })) throw notFound(PACKAGE_NOT_FOUND_MESSAGE);
  if (row.removed_at) {
    const reason = row.removal_reason ? `: ${row.removal_reason}` : '';
    throw gone(`@${key.scope}/${key.name} was removed from the registry${reason}`);
  }
  if (row.status === 'delisted' && !exactOnly) throw notFound(PACKAGE_NOT_FOUND_MESSAGE);
  return row;
}

/** An answer with what its caching needs: a quarantined package's versions are never kept by a cache. */
export interface Moderated<T> {
  value: T;
  moderated: boolean;
}

function toSummary(row: VersionRow): VersionSummary {
  return {
    version: row.version,
    digest: row.digest,
    integrity: row.integrity,
    fileCount: row.file_count,
    totalBytes: Number(row.total_bytes),
    sourceCommit: row.source_commit,
    createdAt: row.created_at.toISOString(),
    warnings: row.warnings,
    risk: row.risk,
    yanked: Boolean(row.yanked),
    yankReason: row.yank_reason ?? null,
  };
}

async function requireVersion(
  db: Db,
  key: PackageKey,
  ref: VersionRef,
  access: ReadAccess,
  bytes = false,
): Promise<VersionRow & { moderated: boolean }> {
  const pkg = await requirePackage(db, key, ref.exact !== null, access);
  // A quarantined package's manifest and findings stay readable for review, but no client gets its
  // bytes (issue 26): 410 with the operator's reason, which no cache keeps (errors are no-store).
  if (bytes && pkg.quarantined_at) throw gone(quarantinedMessage(key, pkg.quarantine_reason));
  const row = await findVersionRow(db, pkg.id, ref.exact);
  if (!row) {
    // `latest` skips yanked versions: say so when there are versions but every one is yanked.
    if (ref.exact === null && (await countVersions(db, pkg.id)) > 0)
      throw notFound(`${VERSION_NOT_FOUND_MESSAGE}: every version of @${key.scope}/${key.name} is yanked`);
    throw notFound(VERSION_NOT_FOUND_MESSAGE);
  }
  return { ...row, moderated: pkg.quarantined_at !== null };
}

export async function listVersions(
  db: Db,
  key: PackageKey,
  query: VersionListQuery,
  access: ReadAccess,
): Promise<Moderated<VersionListResponse>> {
  const pkg = await requirePackage(db, key, false, access);
  const offset = (query.page - 1) * query.pageSize;
  const [rows, total] = await Promise.all([
    listVersionRows(db, pkg.id, offset, query.pageSize),
    countVersions(db, pkg.id),
  ]);
  return {
    value: { data: rows.map(toSummary), total, page: query.page, pageSize: query.pageSize },
    moderated: pkg.quarantined_at !== null,
  };
}

export async function getVersion(
  db: Db,
  key: PackageKey,
  ref: VersionRef,
  access: ReadAccess,
): Promise<Moderated<VersionDetail>> {
  const row = await requireVersion(db, key, ref, access);
  // Dependencies on private packages the reader may not read are left out (docs/versions.md).
  const [files, { dependencies }, signatures, logIndex] = await Promise.all([
    listVersionFiles(db, row.id),
    versionDependencies(db, row.id, access),
    signaturesOf(db, [row.id]),
    logIndexOf(db, row.id),
  ]);
  const value: VersionDetail = {
    ...toSummary(row),
    findings: row.findings as VersionDetail['findings'],
    scope: key.scope,
    name: key.name,
    files: files.map((f) => ({
      path: f.path,
      size: Number(f.size),
      sha256: f.sha256,
      gitBlobSha: f.git_sha1,
      executable: f.executable,
      linkTarget: f.link_target,
    })),
    dependencies,
    signatures: signatures.get(row.id) ?? [],
    log: logIndex === undefined ? null : { index: logIndex },
  };
  return { value, moderated: row.moderated };
}

/** The version's provenance attestations: the same reader rules as the version (private: not found). */
export async function getVersionAttestations(
  db: Db,
  key: PackageKey,
  ref: VersionRef,
  access: ReadAccess,
): Promise<Moderated<VersionAttestationsResponse>> {
  const row = await requireVersion(db, key, ref, access);
  return { value: { attestations: await attestationsOf(db, row.id) }, moderated: row.moderated };
}

/** Bytes of one version with what their headers need. */
export interface VersionContent {
  version: string;
  bytes: Buffer;
  /** The strong validator: the file's sha256, or the archive's integrity. */
  etag: string;
  /** When the version was created: its bytes never changed since (Last-Modified of an exact version). */
  createdAt: Date;
}

async function bytesOf(cache: ContentCache, sha256: string): Promise<Buffer> {
  const bytes = await cache.get(sha256);
  // A version row names its bytes; their absence is the store's fault, not the caller's.
  if (!bytes) throw new ApiError('internal', 'Internal server error', { cause: `blob ${sha256} missing` });
  return bytes;
}

export async function getVersionFile(
  db: Db,
  cache: ContentCache,
  key: PackageKey,
  ref: VersionRef,
  path: string,
  access: ReadAccess,
): Promise<VersionContent & { path: string; linkTarget: string | null }> {
  const row = await requireVersion(db, key, ref, access, true);
  const file = await findVersionFile(db, row.id, path);
  if (!file) throw notFound(FILE_NOT_FOUND_MESSAGE);
  return {
    version: row.version,
    path: file.path,
    linkTarget: file.link_target,
    bytes: await bytesOf(cache, file.sha256),
    etag: `"${file.sha256}"`,
    createdAt: row.created_at,
  };
}

export async function getVersionArchive(
  db: Db,
  cache: ContentCache,
  key: PackageKey,
  ref: VersionRef,
  access: ReadAccess,
): Promise<VersionContent> {
  const row = await requireVersion(db, key, ref, access, true);
  return {
    version: row.version,
    bytes: await bytesOf(cache, row.archive_sha256),
    etag: `"${row.integrity}"`,
    createdAt: row.created_at,
  };
}

/**
 * An exact version's archive, read in one round trip when it is served (downloads are the hot path);
 * a removed, quarantined or unknown one is answered by getVersionArchive, with its errors.
 */
export async function getExactVersionArchive(
  db: Db,
  cache: ContentCache,
  key: PackageKey,
  version: string,
  access: ReadAccess,
): Promise<VersionContent> {
  const row = await findExactArchiveRow(db, key.scope, key.name, version);
  if (!row || row.removed_at || row.quarantined_at || !canRead(access, { ...key, private: row.private }))
    return getVersionArchive(db, cache, key, { exact: version }, access);
  return {
    version: row.version,
    bytes: await bytesOf(cache, row.archive_sha256),
    etag: `"${row.integrity}"`,
    createdAt: row.created_at,
  };
}

/**
 * The version as the discovery RFC's archive in `form` (`agent-skill.tar.gz` is v1, `agent-skill.v2.tar.gz`
 * v2, docs/discovery.md): the rules of archive.tgz (private, removed, quarantined), its bytes built from the
 * version's files.
 */
export async function getAgentSkillArchive(
  db: Db,
  archives: AgentSkillArchives,
  key: PackageKey,
  ref: VersionRef,
  access: ReadAccess,
  form: AgentSkillArchiveForm,
): Promise<VersionContent> {
  const row = await requireVersion(db, key, ref, access, true);
  const bytes = await archives.build(row.id, form);
  return { version: row.version, bytes, etag: `"${sha256Digest(bytes)}"`, createdAt: row.created_at };
}
