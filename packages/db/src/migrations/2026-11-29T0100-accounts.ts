import { type Kysely, sql } from 'kysely';

// Frozen in time: never import app code here, never edit after it has shipped. Add a new file instead.

// Accounts, organisations, private skills and tokens (docs/accounts.md).
//
// The `auth_*` tables are better-auth's (accounts, sessions, linked sign-in identities, verifications,
// organisations with members and invitations, device codes): their columns are the library's own
// camelCase names, as its schema generator wrote them for the plugins packages/accounts configures, so
// the library reads them without a field map. Everything else is ours and snake_case.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table auth_user (
      "id" text primary key,
      "name" text not null,
      "email" text not null unique,
      "emailVerified" boolean not null,
      "image" text,
      "createdAt" timestamptz not null default now(),
      "updatedAt" timestamptz not null default now(),
      -- the admin plugin: 'admin' names a site administrator; banned is a suspension
      "role" text,
      "banned" boolean,
      "banReason" text,
      "banExpires" timestamptz
    )`.execute(db);
  await sql`
    create table auth_session (
      "id" text primary key,
      "expiresAt" timestamptz not null,
      "token" text not null unique,
      "createdAt" timestamptz not null default now(),
      "updatedAt" timestamptz not null,
      "ipAddress" text,
      "userAgent" text,
      "userId" text not null references auth_user ("id") on delete cascade,
      "activeOrganizationId" text,
      "impersonatedBy" text
    )`.execute(db);
  await sql`create index auth_session_user_idx on auth_session ("userId")`.execute(db);
  await sql`
    create table auth_account (
      "id" text primary key,
      "accountId" text not null,
      "providerId" text not null,
      "userId" text not null references auth_user ("id") on delete cascade,
      "accessToken" text,
      "refreshToken" text,
      "idToken" text,
      "accessTokenExpiresAt" timestamptz,
      "refreshTokenExpiresAt" timestamptz,
      "scope" text,
      "password" text,
      "createdAt" timestamptz not null default now(),
      "updatedAt" timestamptz not null
    )`.execute(db);
  await sql`create index auth_account_user_idx on auth_account ("userId")`.execute(db);
  // A code-host identity (GitHub's numeric id) names the scopes bound to it: found by that id.
  await sql`create index auth_account_provider_idx on auth_account ("providerId", "accountId")`.execute(db);
  await sql`
    create table auth_verification (
      "id" text primary key,
      "identifier" text not null,
      "value" text not null,
      "expiresAt" timestamptz not null,
      "createdAt" timestamptz not null default now(),
      "updatedAt" timestamptz not null default now()
    )`.execute(db);
  await sql`create index auth_verification_identifier_idx on auth_verification ("identifier")`.execute(db);
  await sql`
    create table auth_organization (
      "id" text primary key,
      "name" text not null,
      "slug" text not null unique,
      "logo" text,
      "createdAt" timestamptz not null,
      "metadata" text,
      -- the GitHub organisation an admin of it linked (its numeric id): scopes bound to it belong here
      "githubOrgId" bigint unique,
      "githubOrgLogin" text,
      -- set by a site administrator: members keep nothing they reached through it until lifted
      "suspendedAt" timestamptz
    )`.execute(db);
  await sql`
    create table auth_member (
      "id" text primary key,
      "organizationId" text not null references auth_organization ("id") on delete cascade,
      "userId" text not null references auth_user ("id") on delete cascade,
      "role" text not null check ("role" in ('owner', 'admin', 'publisher', 'reader')),
      "createdAt" timestamptz not null,
      unique ("organizationId", "userId")
    )`.execute(db);
  await sql`create index auth_member_user_idx on auth_member ("userId")`.execute(db);
  await sql`
    create table auth_invitation (
      "id" text primary key,
      "organizationId" text not null references auth_organization ("id") on delete cascade,
      "email" text not null,
      "role" text,
      "status" text not null,
      "expiresAt" timestamptz not null,
      "createdAt" timestamptz not null default now(),
      "inviterId" text not null references auth_user ("id") on delete cascade
    )`.execute(db);
  await sql`create index auth_invitation_org_idx on auth_invitation ("organizationId")`.execute(db);
  await sql`create index auth_invitation_email_idx on auth_invitation ("email")`.execute(db);
  await sql`
    create table auth_device_code (
      "id" text primary key,
      "deviceCode" text not null unique,
      "userCode" text not null unique,
      "userId" text,
      "expiresAt" timestamptz not null,
      "status" text not null,
      "lastPolledAt" timestamptz,
      "pollingInterval" integer,
      "clientId" text,
      "scope" text
    )`.execute(db);

  // Who a scope belongs to beyond its code-host binding (scope_owners), and whether it is private. A
  // scope with no row is public and belongs only to its code-host owner.
  await sql`
    create table scope_settings (
      scope text primary key,
      organization_id text references auth_organization ("id") on delete set null,
      account_id text references auth_user ("id") on delete set null,
      visibility text not null default 'public' check (visibility in ('public', 'private')),
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now(),
      check (organization_id is null or account_id is null)
    )`.execute(db);
  await sql`create index scope_settings_org_idx on scope_settings (organization_id)`.execute(db);
  await sql`create index scope_settings_account_idx on scope_settings (account_id)`.execute(db);

  // A package's own visibility, and the effective one (private when it or its scope is): the second is
  // what every read path filters on, kept by the service that changes either.
  await sql`
    alter table packages
      add column visibility text not null default 'public' check (visibility in ('public', 'private')),
      add column private boolean not null default false`.execute(db);
  await sql`create index packages_private_idx on packages (scope, name) where private`.execute(db);
  // The database keeps `private` true to its definition, so no writer (the indexer, an upload, an
  // operator's SQL) can create a public package in a private scope by forgetting it.
  await sql`
    create function pkgreg_package_private() returns trigger language plpgsql as $$
    begin
      new.private := new.visibility = 'private'
        or exists (select 1 from scope_settings s where s.scope = new.scope and s.visibility = 'private');
      return new;
    end $$`.execute(db);
  await sql`
    create trigger packages_private before insert or update of visibility, scope on packages
      for each row execute function pkgreg_package_private()`.execute(db);
  await sql`
    create function pkgreg_scope_private() returns trigger language plpgsql as $$
    begin
      update packages p
         set private = (new.visibility = 'private' or p.visibility = 'private')
       where p.scope = new.scope
         and p.private is distinct from (new.visibility = 'private' or p.visibility = 'private');
      return null;
    end $$`.execute(db);
  await sql`
    create trigger scope_settings_private after insert or update of visibility on scope_settings
      for each row execute function pkgreg_scope_private()`.execute(db);

  // Granular access tokens: only a SHA-256 of the secret is kept; `prefix` is what lists show.
  await sql`
    create table access_tokens (
      id uuid primary key default gen_random_uuid(),
      account_id text not null references auth_user ("id") on delete cascade,
      name text not null,
      token_hash bytea not null unique,
      prefix text not null,
      permission text not null check (permission in ('read', 'publish')),
      organizations text[] not null default '{}',
      scopes text[] not null default '{}',
      packages text[] not null default '{}',
      allowed_cidrs text[] not null default '{}',
      expires_at timestamptz not null,
      created_at timestamptz not null default now(),
      last_used_at timestamptz,
      revoked_at timestamptz
    )`.execute(db);
  await sql`create index access_tokens_account_idx on access_tokens (account_id, created_at desc)`.execute(
    db,
  );

  // Every change of membership, role, visibility or token: what owners read in the audit log.
  await sql`
    create table account_audit_events (
      id bigserial primary key,
      at timestamptz not null default now(),
      actor_id text,
      organization_id text,
      action text not null,
      target text,
      details jsonb not null default '{}'::jsonb,
      request_id text
    )`.execute(db);
  await sql`create index account_audit_events_org_idx on account_audit_events (organization_id, id desc)`.execute(
    db,
  );
  await sql`create index account_audit_events_actor_idx on account_audit_events (actor_id, id desc)`.execute(
    db,
  );

  // Trusted publishers: CI identities (an OIDC issuer's repository, workflow and environment) allowed to
  // upload versions of a scope's packages, or of one package, without a stored secret.
  await sql`
    create table trusted_publishers (
      id uuid primary key default gen_random_uuid(),
      scope text not null,
      name text,
      issuer text not null,
      repository text not null,
      workflow text,
      environment text,
      created_by text,
      created_at timestamptz not null default now()
    )`.execute(db);
  await sql`create index trusted_publishers_scope_idx on trusted_publishers (scope)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table if exists trusted_publishers`.execute(db);
  await sql`drop table if exists account_audit_events`.execute(db);
  await sql`drop table if exists access_tokens`.execute(db);
  await sql`drop trigger if exists scope_settings_private on scope_settings`.execute(db);
  await sql`drop function if exists pkgreg_scope_private()`.execute(db);
  await sql`drop trigger if exists packages_private on packages`.execute(db);
  await sql`drop function if exists pkgreg_package_private()`.execute(db);
  await sql`drop index if exists packages_private_idx`.execute(db);
  await sql`alter table packages drop column if exists private, drop column if exists visibility`.execute(db);
  await sql`drop table if exists scope_settings`.execute(db);
  for (const table of [
    'auth_device_code',
    'auth_invitation',
    'auth_member',
    'auth_organization',
    'auth_verification',
    'auth_account',
    'auth_session',
    'auth_user',
  ]) {
    await sql.raw(`drop table if exists ${table}`).execute(db);
  }
}
