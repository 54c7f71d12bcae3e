import { type Kysely, sql } from 'kysely';

// Frozen in time: never import app code here, never edit after it has shipped. Add a new file instead.
// Issue 32: a running task says what it is doing (`step 3/8: reading @acme/go-rest-api SKILL.md`), shown
// by tasks/get as MCP's `statusMessage`. Written by the worker while the task runs, cleared when it ends.

export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table tasks add column status_message text`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table tasks drop column status_message`.execute(db);
}
