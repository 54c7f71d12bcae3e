import type { Db } from '@pkgreg/db';
import { sql } from 'kysely';

// SQL of uploads (docs/publishing.md, "Uploading (hosted packages)"): what an upload needs to know of
// the package and its scope before it reads the body, the token's limits when it claims a scope, and
// the lock that puts two uploads of one package one after the other.

export interface UploadTarget {
  /** The package, when it exists. */
  pkg: {
    id: string;
    hosted: boolean;
    source_repo: string;
    private: boolean;
    removed_at: Date | null;
    removal_reason: string | null;
  } | null;
  /** The scope's settings, when it has any. */
  scope: {
    visibility: 'public' | 'private';
    organization_id: string | null;
    account_id: string | null;
  } | null;
}

export async function findUploadTarget(db: Db, scope: string, name: string): Promise<UploadTarget> {
  const pkg = await db
    .selectFrom('packages')
    .select(['id', 'hosted', 'source_repo', 'private', 'removed_at', 'removal_reason'])
    .where('scope', '=', scope)
    .where('name', '=', name)
    .executeTakeFirst();
  const settings = await db
    .selectFrom('scope_settings')
    .select(['visibility', 'organization_id', 'account_id'])
    .where('scope', '=', scope)
    .executeTakeFirst();
  return { pkg: pkg ?? null, scope: settings ?? null };
}

/** An access token's limits (organisations, scopes, packages); all empty: whatever its account reaches. */
export async function tokenLimits(db: Db, tokenId: string) {
  return db
    .selectFrom('access_tokens')
    .select(['organizations', 'scopes', 'packages'])
    .where('id', '=', tokenId)
    .executeTakeFirst();
}

/** Uploads of one package wait for each other until the first commits (in the caller's transaction). */
export async function lockPackageUploads(trx: Db, scope: string, name: string): Promise<void> {
  await sql`select pg_advisory_xact_lock(hashtextextended(${`pkgreg-upload:${scope}/${name}`}, 0))`.execute(
    trx,
  );
}

export async function packagePrivacy(db: Db, id: string): Promise<boolean> {
  const row = await db
    .selectFrom('packages')
    .select('private')
    .where('id', '=', id)
    .executeTakeFirstOrThrow();
  return row.private;
}
