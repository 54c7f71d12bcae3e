import { type Kysely, sql } from 'kysely';

// Frozen in time: never import app code here, never edit after it has shipped. Add a new file instead.
// Delegation assertions (a person's reads through the edge and the runtime worker) get keys of their own,
// apart from the keys that sign the edge's access tokens: the worker, which runs agents and reads what
// models answer, then holds no key the edge accepts a token from, and a deployment can grant its role
// this table alone. Same shape and lifecycle as oauth_signing_keys; the edge creates the first key.

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table edge_delegation_keys (
      kid text primary key,
      alg text not null,
      public_jwk jsonb not null,
      private_jwk jsonb not null,
      status text not null default 'active' check (status in ('active', 'retiring', 'retired')),
      created_at timestamptz not null default now(),
      retired_at timestamptz)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table edge_delegation_keys`.execute(db);
}
