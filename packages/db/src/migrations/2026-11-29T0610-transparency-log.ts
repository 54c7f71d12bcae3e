import { type Kysely, sql } from 'kysely';

// Frozen in time: never import app code here, never edit after it has shipped. Add a new file instead.
// Issue 30, the transparency log (docs/provenance.md, "Transparency log"): every public version's
// `@scope/name@version integrity` is a leaf of an append-only RFC 6962 / RFC 9162 Merkle tree.
// - `log_leaves`: leaf `idx` (0, 1, 2, … with no gap), the version it logs, its entry text and leaf hash.
//   The version's row can no longer be deleted (the foreign key has no cascade): the log outlives it.
// - `log_nodes`: the hash of every complete subtree, leaves included (level 0): the subtree of 2^level
//   leaves from leaf idx·2^level. Appending a leaf writes the nodes it completes, so a root or a proof is
//   O(log n) reads.
// - `log_checkpoints`: each signed tree head (a signed note, the format of Go's checksum database), by size.
// None of the three is ever updated or deleted: history is never rewritten (the guard refuses it).

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table log_leaves (
      idx bigint primary key check (idx >= 0),
      version_id uuid not null unique references package_versions ("id"),
      entry text not null,
      leaf_hash bytea not null check (octet_length(leaf_hash) = 32),
      created_at timestamptz not null default now())`.execute(db);
  await sql`
    create table log_nodes (
      level integer not null check (level between 0 and 62),
      idx bigint not null check (idx >= 0),
      hash bytea not null check (octet_length(hash) = 32),
      primary key (level, idx))`.execute(db);
  await sql`
    create table log_checkpoints (
      size bigint primary key check (size > 0),
      root_hash bytea not null check (octet_length(root_hash) = 32),
      note text not null,
      created_at timestamptz not null default now())`.execute(db);
  await sql`
    create function pkgreg_guard_log() returns trigger language plpgsql as $$
    begin
      raise exception '% is append-only: rows are never updated or deleted', tg_table_name
        using errcode = 'restrict_violation';
    end $$`.execute(db);
  for (const table of ['log_leaves', 'log_nodes', 'log_checkpoints']) {
    await sql`
      create trigger ${sql.id(`${table}_append_only`)} before update or delete on ${sql.id(table)}
      for each row execute function pkgreg_guard_log()`.execute(db);
    // TRUNCATE skips row triggers: refused by a statement trigger of its own.
    await sql`
      create trigger ${sql.id(`${table}_no_truncate`)} before truncate on ${sql.id(table)}
      for each statement execute function pkgreg_guard_log()`.execute(db);
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table if exists log_checkpoints`.execute(db);
  await sql`drop table if exists log_nodes`.execute(db);
  await sql`drop table if exists log_leaves`.execute(db);
  await sql`drop function if exists pkgreg_guard_log()`.execute(db);
}
