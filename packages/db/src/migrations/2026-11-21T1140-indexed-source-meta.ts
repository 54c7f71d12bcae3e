import { type Kysely, sql } from 'kysely';

// Frozen in time: never import app code here, never edit after it has shipped. Add a new file instead.

// A conditional request answered 304 carries no body, so the indexer keeps the repository metadata
// (stars, license, default branch, urls) it last received next to that response's ETag.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('indexed_sources')
    .addColumn('repo_meta', 'jsonb', (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('indexed_sources').dropColumn('repo_meta').execute();
}
