import { type Kysely, sql } from 'kysely';

// Frozen in time: never import app code here, never edit after it has shipped. Add a new file instead.
// docs/publishing.md, Webhooks: a webhook secret proves one repository of one account. source_webhooks
// records the account (the code host's owner id) the secret was issued to, so a delivery for a
// repository that has since changed hands is refused. Existing rows take the owner their repository
// was last indexed under; a row with none adopts the account of the next proven publish.

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('source_webhooks').addColumn('owner_id', 'bigint').execute();
  await sql`
    update source_webhooks w
    set owner_id = (s.repo_meta ->> 'ownerId')::bigint
    from indexed_sources s
    where s.kind = 'github'
      and s.repository_id = w.repository_id
      and jsonb_typeof(s.repo_meta -> 'ownerId') = 'number'`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('source_webhooks').dropColumn('owner_id').execute();
}
