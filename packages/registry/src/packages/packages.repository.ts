import type { Database } from '@pkgreg/db';
import { type Kysely, type Selectable, sql } from 'kysely';
import type { IndexedPackage } from './package-values.js';

// SQL of package rows: what a run writes from a repository's SKILL.md files, what owners change
// (deprecation) and what the operator changes (removal). Plain functions taking the database first.

type Conn = Kysely<Database>;
export type PackageRow = Selectable<Database['packages']>;

/** Packages of the repository under any of its names (a renamed repository keeps its packages). */
export async function packagesOfRepo(db: Conn, sourceRepos: string[]): Promise<PackageRow[]> {
  return db.selectFrom('packages').selectAll().where('source_repo', 'in', sourceRepos).execute();
}

export async function countListedOfRepo(db: Conn, sourceRepo: string): Promise<number> {
  const row = await db
    .selectFrom('packages')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('source_repo', '=', sourceRepo)
    .where('status', '<>', 'delisted')
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function findPackage(db: Conn, scope: string, name: string): Promise<PackageRow | undefined> {
  return db
    .selectFrom('packages')
    .selectAll()
    .where('scope', '=', scope)
    .where('name', '=', name)
    .executeTakeFirst();
}

function columns(pkg: IndexedPackage, now: Date) {
  return {
    scope: pkg.scope,
    name: pkg.name,
    description: pkg.description,
    kind: pkg.kind,
    category: pkg.category,
    tags: pkg.tags,
    compatibility: pkg.compatibility,
    language: pkg.language,
    version: pkg.version,
    source_repo: pkg.sourceRepo,
    source_path: pkg.sourcePath,
    source_ref: pkg.sourceRef,
    repo_url: pkg.repoUrl,
    homepage_url: pkg.homepageUrl,
    repo_owner: pkg.repoOwner,
    author: pkg.author,
    repo_stars: pkg.repoStars,
    license: pkg.license,
    skill_md_raw: pkg.skillMdRaw,
    frontmatter: JSON.stringify(pkg.frontmatter),
    allowed_tools: pkg.allowedTools,
    token_count: pkg.tokenCount,
    file_count: pkg.fileCount,
    progressive_disclosure: pkg.progressiveDisclosure,
    status: pkg.status,
    last_commit_sha: pkg.lastCommitSha,
    warnings: JSON.stringify(pkg.warnings),
    last_indexed_at: now,
  };
}

/** Inserts unless (scope, name) is taken; returns the new id, or null on a name collision. */
export async function insertPackage(db: Conn, pkg: IndexedPackage, now: Date): Promise<string | null> {
  const row = await db
    .insertInto('packages')
    .values({ ...columns(pkg, now), first_indexed_at: now })
    .onConflict((oc) => oc.columns(['scope', 'name']).doNothing())
    .returning('id')
    .executeTakeFirst();
  return row?.id ?? null;
}

/**
 * Rewrites the indexer's columns; download_count, first_indexed_at, verified, featured and the owner's
 * deprecation are left alone.
 */
export async function updatePackage(db: Conn, id: string, pkg: IndexedPackage, now: Date): Promise<void> {
  await db.updateTable('packages').set(columns(pkg, now)).where('id', '=', id).execute();
}

/**
 * `verified`: true once a proven run (a publish, a signed webhook) wrote or confirmed the package's
 * latest version, false once a crawl created one. Rows already right are not rewritten.
 */
export async function setVerified(db: Conn, ids: string[], verified: boolean): Promise<void> {
  if (ids.length === 0) return;
  await db
    .updateTable('packages')
    .set({ verified })
    .where('id', 'in', ids)
    .where('verified', '<>', verified)
    .execute();
}

/** Marks a package hosted: its versions were uploaded to the registry, not read from a code host. */
export async function setHosted(db: Conn, id: string): Promise<void> {
  await db
    .updateTable('packages')
    .set({ hosted: true })
    .where('id', '=', id)
    .where('hosted', '=', false)
    .execute();
}

/** The listed packages of a repository as a not-modified run reports them. */
export async function listedOfRepo(db: Conn, sourceRepo: string) {
  return db
    .selectFrom('packages')
    .select(['scope', 'name', 'source_path', 'version', 'warnings'])
    .where('source_repo', '=', sourceRepo)
    .where('status', '<>', 'delisted')
    .orderBy('source_path')
    .execute();
}

export async function delistPackages(db: Conn, ids: string[], now: Date): Promise<void> {
  if (ids.length === 0) return;
  await db
    .updateTable('packages')
    .set({ status: 'delisted', last_indexed_at: now })
    .where('id', 'in', ids)
    .execute();
}

/** True when the stored row already says everything `pkg` says (so no write is needed). */
export function rowMatches(row: PackageRow, pkg: IndexedPackage): boolean {
  const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
  return (
    row.last_commit_sha === pkg.lastCommitSha &&
    row.scope === pkg.scope &&
    row.name === pkg.name &&
    row.description === pkg.description &&
    row.kind === pkg.kind &&
    row.category === pkg.category &&
    same(row.tags, pkg.tags) &&
    same(row.compatibility, pkg.compatibility) &&
    row.language === pkg.language &&
    row.version === pkg.version &&
    row.source_repo === pkg.sourceRepo &&
    row.source_path === pkg.sourcePath &&
    row.source_ref === pkg.sourceRef &&
    row.repo_url === pkg.repoUrl &&
    row.homepage_url === pkg.homepageUrl &&
    row.repo_owner === pkg.repoOwner &&
    row.author === pkg.author &&
    row.repo_stars === pkg.repoStars &&
    row.license === pkg.license &&
    same(row.allowed_tools, pkg.allowedTools) &&
    row.token_count === pkg.tokenCount &&
    row.file_count === pkg.fileCount &&
    row.progressive_disclosure === pkg.progressiveDisclosure &&
    row.status === pkg.status &&
    same(row.warnings, pkg.warnings)
  );
}

export async function findManagedPackage(db: Conn, scope: string, name: string) {
  return db
    .selectFrom('packages')
    .select([
      'id',
      'scope',
      'name',
      'source_repo',
      'status',
      'removed_at',
      'removal_reason',
      'deprecated_at',
      'deprecation_message',
      'private',
      sql<string | null>`frontmatter -> 'metadata' ->> 'status'`.as('declared_status'),
    ])
    .where('scope', '=', scope)
    .where('name', '=', name)
    .executeTakeFirst();
}

export type ManagedPackage = NonNullable<Awaited<ReturnType<typeof findManagedPackage>>>;

/** The owner's deprecation; an active package becomes deprecated (a delisted one stays delisted). */
export async function deprecatePackage(db: Conn, id: string, message: string | null) {
  return db
    .updateTable('packages')
    .set({
      deprecated_at: sql<Date>`coalesce(deprecated_at, now())`,
      deprecation_message: message,
      status: sql`case when status = 'active' then 'deprecated' else status end`,
    })
    .where('id', '=', id)
    .returning(['status', 'deprecation_message'])
    .executeTakeFirstOrThrow();
}

/**
 * Lifts the owner's deprecation. The status goes back to what the SKILL.md says (its own
 * `metadata.status: deprecated` still deprecates it).
 */
export async function undeprecatePackage(db: Conn, id: string, declaredDeprecated: boolean) {
  return db
    .updateTable('packages')
    .set({
      deprecated_at: null,
      deprecation_message: null,
      status: declaredDeprecated
        ? sql`status`
        : sql`case when status = 'deprecated' then 'active' else status end`,
    })
    .where('id', '=', id)
    .returning(['status', 'deprecation_message'])
    .executeTakeFirstOrThrow();
}

/** An operator removal: delisted, and every version 410 with the reason. False when there is no such package. */
export async function removePackage(
  db: Conn,
  key: { scope: string; name: string },
  reason: string,
): Promise<boolean> {
  const result = await db
    .updateTable('packages')
    .set({ removed_at: sql`now()`, removal_reason: reason, status: 'delisted' })
    .where('scope', '=', key.scope)
    .where('name', '=', key.name)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** Lifts a removal (the package stays delisted until its source is indexed again). */
export async function restorePackage(db: Conn, key: { scope: string; name: string }): Promise<boolean> {
  const result = await db
    .updateTable('packages')
    .set({ removed_at: null, removal_reason: null })
    .where('scope', '=', key.scope)
    .where('name', '=', key.name)
    .where('removed_at', 'is not', null)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** A visible (not delisted) package's id, and whether it is private (readers decide what that means). */
export async function findVisiblePackageId(
  db: Conn,
  scope: string,
  name: string,
): Promise<{ id: string; private: boolean } | undefined> {
  return db
    .selectFrom('packages')
    .select(['id', 'private'])
    .where('scope', '=', scope)
    .where('name', '=', name)
    .where('status', '<>', 'delisted')
    .executeTakeFirst();
}
