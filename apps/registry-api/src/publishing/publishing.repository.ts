import type { Db } from '@pkgreg/db';
import { sql } from 'kysely';

// SQL of publishing in the API: webhook salts, the sources a publish or a push concerns, and the
// package and version rows owners manage. Scope bindings and publish runs are @pkgreg/indexer's
// (the worker writes them too).

export async function findWebhook(db: Db, repositoryId: number) {
  return db
    .selectFrom('source_webhooks')
    .selectAll()
    .where('repository_id', '=', repositoryId)
    .executeTakeFirst();
}

/** Creates (or, rotating, replaces) a repository's webhook salt, issued to the owner account `ownerId`. */
export async function saveWebhookSalt(
  db: Db,
  values: { repositoryId: number; locator: string; ownerId: number; salt: Buffer; rotated: boolean },
): Promise<void> {
  await db
    .insertInto('source_webhooks')
    .values({
      repository_id: values.repositoryId,
      locator: values.locator,
      owner_id: values.ownerId,
      secret_salt: values.salt,
    })
    .onConflict((oc) =>
      oc.column('repository_id').doUpdateSet({
        locator: values.locator,
        owner_id: values.ownerId,
        secret_salt: values.salt,
        rotated_at: values.rotated ? sql<Date>`now()` : null,
      }),
    )
    .execute();
}

/**
 * After a proven publish: a renamed repository's webhook follows its new name, and a row from before
 * owners were recorded takes the proven owner.
 */
export async function updateWebhook(
  db: Db,
  repositoryId: number,
  values: { locator: string; ownerId: number },
): Promise<void> {
  await db
    .updateTable('source_webhooks')
    .set({ locator: values.locator, owner_id: sql<number>`coalesce(owner_id, ${values.ownerId})` })
    .where('repository_id', '=', repositoryId)
    .where((eb) => eb.or([eb('locator', '<>', values.locator), eb('owner_id', 'is', null)]))
    .execute();
}

/** Drops a repository's webhook secret (the repository changed hands; nobody may be shown a new one). */
export async function deleteWebhook(db: Db, repositoryId: number): Promise<void> {
  await db.deleteFrom('source_webhooks').where('repository_id', '=', repositoryId).execute();
}

/** A local git source of the repository (the operator indexes it from a clone). */
export async function findGitSourceOfRepo(db: Db, locator: string) {
  return db
    .selectFrom('indexed_sources')
    .select(['locator', 'source_repo'])
    .where('kind', '=', 'git')
    .where(sql<boolean>`lower(source_repo) = ${locator}`)
    .executeTakeFirst();
}

/**
 * The GitHub source of a repository: by its id, else by its locator when that row's id is unknown (a
 * row of another repository id is another repository's, whatever its name).
 */
export async function findGitHubSource(db: Db, repositoryId: number, locator: string) {
  return db
    .selectFrom('indexed_sources')
    .select(['id', 'locator', 'source_repo', 'ref', 'default_branch'])
    .where('kind', '=', 'github')
    .where((eb) =>
      eb.or([
        eb('repository_id', '=', repositoryId),
        eb.and([eb('locator', '=', locator), eb('repository_id', 'is', null)]),
      ]),
    )
    .orderBy(sql`repository_id is null`)
    .limit(1)
    .executeTakeFirst();
}

export async function findManagedPackage(db: Db, scope: string, name: string) {
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
      sql<string | null>`frontmatter -> 'metadata' ->> 'status'`.as('declared_status'),
    ])
    .where('scope', '=', scope)
    .where('name', '=', name)
    .executeTakeFirst();
}

export type ManagedPackage = NonNullable<Awaited<ReturnType<typeof findManagedPackage>>>;

/** The owner's deprecation; an active package becomes deprecated (a delisted one stays delisted). */
export async function deprecatePackage(db: Db, id: string, message: string | null) {
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
export async function undeprecatePackage(db: Db, id: string, declaredDeprecated: boolean) {
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

export async function findVersionOf(db: Db, packageId: string, version: string) {
  return db
    .selectFrom('package_versions as v')
    .leftJoin('package_version_yanks as y', 'y.version_id', 'v.id')
    .select(['v.id', 'v.version', 'y.version_id as yanked', 'y.reason as yank_reason'])
    .where('v.package_id', '=', packageId)
    .where('v.version', '=', version)
    .executeTakeFirst();
}

export async function yankVersion(db: Db, versionId: string, reason: string | null): Promise<void> {
  await db
    .insertInto('package_version_yanks')
    .values({ version_id: versionId, reason })
    .onConflict((oc) => oc.column('version_id').doUpdateSet({ reason }))
    .execute();
}

export async function unyankVersion(db: Db, versionId: string): Promise<void> {
  await db.deleteFrom('package_version_yanks').where('version_id', '=', versionId).execute();
}

/**
 * The package row names its newest version not yanked (detail's `version`, what `latest` serves);
 * null when every version is yanked. Returns it.
 */
export async function refreshLatestVersion(db: Db, packageId: string): Promise<string | null> {
  const latest = await db
    .selectFrom('package_versions as v')
    .select('v.version')
    .where('v.package_id', '=', packageId)
    .where((eb) =>
      eb.not(
        eb.exists(
          eb
            .selectFrom('package_version_yanks as y')
            .select('y.version_id')
            .whereRef('y.version_id', '=', 'v.id'),
        ),
      ),
    )
    .orderBy('v.seq', 'desc')
    .limit(1)
    .executeTakeFirst();
  const version = latest?.version ?? null;
  await db
    .updateTable('packages')
    .set({ version })
    .where('id', '=', packageId)
    .where(sql<boolean>`version is distinct from ${version}`)
    .execute();
  return version;
}
