import { type Kysely, sql } from 'kysely';

// Frozen in time: never import app code here, never edit after it has shipped. Add a new file instead.
// Issue 29, people sign in to the edge by URL (docs/plans/edge-oauth.md): authorization code + PKCE,
// dynamic registration and consent, served by oidc-provider on the edge with the consent page on the
// registry, both on this database.
// - `edge_oauth_artifacts`: what oidc-provider persists through its adapter (sessions, interactions,
//   authorization codes, refresh tokens, grants), keyed by the SHA-256 of the id so that no code or
//   refresh token is kept in a usable form. `consumed_at` is set once, by a conditional update: a second
//   use of a code or refresh token is seen however close the two requests come. The grant, account and
//   client columns let a revocation reach every artifact of one (account, client) without the provider.
// - `edge_dynamic_clients`: clients registered by RFC 7591 (the secret of a confidential one hashed),
//   expiring when unused.
// - `edge_consent_requests`: the hand-off of one authorization between the edge (which holds the
//   interaction, bound to the browser by a cookie whose hash is `binding_hash`) and the registry (which
//   knows who is signed in and records the decision). Each row is claimed by one account and decided and
//   consumed once.
// - `edge_delegations`: what a person allowed an app (remembered consent), revocable from the web UI;
//   every change bumps edge_access_version, so edges refuse a revoked app's tokens at once.

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table edge_oauth_artifacts (
      model text not null,
      id_hash text not null,
      payload jsonb not null,
      grant_id text,
      uid text,
      account_id text,
      client_id text,
      expires_at timestamptz,
      consumed_at timestamptz,
      created_at timestamptz not null default now(),
      primary key (model, id_hash))`.execute(db);
  await sql`create index edge_oauth_artifacts_grant_idx on edge_oauth_artifacts (grant_id) where grant_id is not null`.execute(
    db,
  );
  await sql`create index edge_oauth_artifacts_uid_idx on edge_oauth_artifacts (model, uid) where uid is not null`.execute(
    db,
  );
  await sql`create index edge_oauth_artifacts_account_idx on edge_oauth_artifacts (account_id, client_id)
    where account_id is not null`.execute(db);
  await sql`create index edge_oauth_artifacts_expiry_idx on edge_oauth_artifacts (expires_at)`.execute(db);

  await sql`
    create table edge_dynamic_clients (
      client_id text primary key,
      metadata jsonb not null,
      secret_hash text,
      registered_from text,
      created_at timestamptz not null default now(),
      last_used_at timestamptz,
      expires_at timestamptz not null)`.execute(db);
  await sql`create index edge_dynamic_clients_expiry_idx on edge_dynamic_clients (expires_at)`.execute(db);

  await sql`
    create table edge_consent_requests (
      id_hash text primary key,
      interaction_uid text not null unique,
      client_id text not null,
      client_kind text not null check (client_kind in ('metadata_document', 'registered', 'operator')),
      client_name text,
      client_uri text,
      logo_uri text,
      redirect_host text not null,
      resource text not null,
      scopes text[] not null,
      binding_hash text not null,
      account_id text references auth_user ("id") on delete cascade,
      decision text check (decision in ('allow', 'deny')),
      decision_code_hash text,
      decided_at timestamptz,
      consumed_at timestamptz,
      created_at timestamptz not null default now(),
      expires_at timestamptz not null,
      check ((decision is null) = (decided_at is null)),
      check (decision is null or account_id is not null))`.execute(db);
  await sql`create index edge_consent_requests_expiry_idx on edge_consent_requests (expires_at)`.execute(db);

  await sql`
    create table edge_delegations (
      account_id text not null references auth_user ("id") on delete cascade,
      client_id text not null,
      client_name text,
      scopes text[] not null,
      grant_id text,
      created_at timestamptz not null default now(),
      last_used_at timestamptz,
      revoked_at timestamptz,
      primary key (account_id, client_id))`.execute(db);
  await sql`
    create trigger edge_delegations_access_changed after insert or update or delete on edge_delegations
    for each statement execute function pkgreg_edge_access_changed()`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table if exists edge_delegations`.execute(db);
  await sql`drop table if exists edge_consent_requests`.execute(db);
  await sql`drop table if exists edge_dynamic_clients`.execute(db);
  await sql`drop table if exists edge_oauth_artifacts`.execute(db);
}
