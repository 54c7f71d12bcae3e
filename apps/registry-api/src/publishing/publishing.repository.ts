import type { Db } from '@pkgreg/db';
import { sql } from 'kysely';

// SQL of publishing in the API: webhook salts and the sources a publish or a push concerns. Scope
// bindings, publish runs and the package and version rows owners manage are @pkgreg/registry's.

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
