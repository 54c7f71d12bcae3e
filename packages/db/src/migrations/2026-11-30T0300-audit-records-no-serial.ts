import { type Kysely, sql } from 'kysely';

// Frozen in time: never import app code here, never edit after it has shipped. Add a new file instead.

// Every /mcp request writes an audit row, and Postgres's share of that row is the edge's largest cost
// beside its own (docs/benchmarks.md, MCP edge). The serial id cost each row a sequence step and a
// primary-key insert (about a quarter of the row's COPY) and named nothing the request id does not:
// rows are ordered by `at`, whose microsecond digits number one edge's requests of a millisecond
// (docs/decisions.md, "MCP edge: admission, limits and audit").

export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table audit_records drop column id`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table audit_records add column id bigserial primary key`.execute(db);
}
