import { type Kysely, sql } from 'kysely';

// Frozen in time: never import app code here, never edit after it has shipped. Add a new file instead.
// Issue 29: a hosted tenant or tunnel session may belong to a person or an organisation; it then also
// serves the apps that person (or any member of that organisation) signed in with. Who owns what, and
// who is a member, change who may call: each change bumps edge_access_version (as grants do), so every
// edge sees it at its next request.

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table edge_backend_owners (
      backend_mode text not null check (backend_mode in ('hosted', 'local_tunnel')),
      backend_id text not null,
      account_id text references auth_user ("id") on delete cascade,
      organization_id text references auth_organization ("id") on delete cascade,
      created_at timestamptz not null default now(),
      primary key (backend_mode, backend_id),
      check (num_nonnulls(account_id, organization_id) = 1))`.execute(db);
  await sql`
    create trigger edge_backend_owners_access_changed after insert or update or delete on edge_backend_owners
    for each statement execute function pkgreg_edge_access_changed()`.execute(db);
  await sql`
    create trigger auth_member_edge_access_changed after insert or update or delete on auth_member
    for each statement execute function pkgreg_edge_access_changed()`.execute(db);
  await sql`
    create trigger auth_organization_edge_access_changed after update of "suspendedAt" or delete
    on auth_organization for each statement execute function pkgreg_edge_access_changed()`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop trigger if exists auth_organization_edge_access_changed on auth_organization`.execute(db);
  await sql`drop trigger if exists auth_member_edge_access_changed on auth_member`.execute(db);
  await sql`drop table if exists edge_backend_owners`.execute(db);
}
