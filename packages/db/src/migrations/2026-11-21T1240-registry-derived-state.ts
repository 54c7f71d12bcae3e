import { type Kysely, sql } from 'kysely';

// Frozen in time: never import app code here, never edit after it has shipped. Add a new file instead.

// The package_list_changes value the derived tables (list positions, search docs and lexemes) were last
// rebuilt at, so a restarted API process does not rebuild them (seconds of CPU at 1M packages) when
// nothing changed meanwhile.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table package_derived_state (
      id boolean primary key default true check (id),
      change_counter bigint not null,
      refreshed_at timestamptz not null default now()
    )`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table if exists package_derived_state`.execute(db);
}
