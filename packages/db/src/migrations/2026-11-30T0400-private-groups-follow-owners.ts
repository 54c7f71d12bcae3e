import { type Kysely, sql } from 'kysely';

// Frozen in time: never import app code here, never edit after it has shipped. Add a new file instead.

// The groups of private search positions (migration 2026-11-29T2300) are each organisation's scopes:
// by scope settings, else through the code-host organisation linked to it. A change of either moved no
// package, so the derived tables kept the old groups until some package changed. These statement
// triggers move the list-change counter too: the refresher rebuilds at its next tick. Answers were right
// either way (a group is read only by a reader of all its scopes); members' searches were slower.

const TRIGGERS: Array<[table: string, events: string]> = [
  ['scope_settings', 'insert or update of scope, organization_id or delete'],
  ['scope_owners', 'insert or update of scope, owner_id or delete'],
  ['auth_organization', 'insert or update of "githubOrgId" or delete'],
];

export async function up(db: Kysely<any>): Promise<void> {
  for (const [table, events] of TRIGGERS) {
    await sql
      .raw(
        `create trigger ${table}_list_change after ${events} on ${table}
         for each statement execute function pkgreg_note_list_change()`,
      )
      .execute(db);
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const [table] of TRIGGERS) {
    await sql.raw(`drop trigger if exists ${table}_list_change on ${table}`).execute(db);
  }
}
