import type { Database } from '@pkgreg/db';
import type { Kysely } from 'kysely';

// SQL of yanks: an owner's yank lives in its own table, so a version row is never updated.

type Conn = Kysely<Database>;

export async function yankVersion(db: Conn, versionId: string, reason: string | null): Promise<void> {
  await db
    .insertInto('package_version_yanks')
    .values({ version_id: versionId, reason })
    .onConflict((oc) => oc.column('version_id').doUpdateSet({ reason }))
    .execute();
}

export async function unyankVersion(db: Conn, versionId: string): Promise<void> {
  await db.deleteFrom('package_version_yanks').where('version_id', '=', versionId).execute();
}
