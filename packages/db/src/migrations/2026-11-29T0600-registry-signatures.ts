import { type Kysely, sql } from 'kysely';

// Frozen in time: never import app code here, never edit after it has shipped. Add a new file instead.
// Issue 30, provenance you can check (docs/provenance.md): the registry signs every version's name,
// version and archive integrity with an Ed25519 key of its own.
// - `registry_signing_keys`: every public key that ever signed, published at GET /api/keys with when it
//   stopped being trusted for new signatures (`expires_at`); a key is never deleted, so old signatures
//   keep verifying after a rotation.
// - `version_signatures`: one signature per version and key, over `@scope/name@version:integrity`.

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table registry_signing_keys (
      keyid text primary key,
      algorithm text not null check (algorithm = 'ed25519'),
      public_key text not null unique,
      created_at timestamptz not null default now(),
      expires_at timestamptz)`.execute(db);
  await sql`
    create table version_signatures (
      version_id uuid not null references package_versions ("id") on delete cascade,
      keyid text not null references registry_signing_keys (keyid),
      signature text not null,
      created_at timestamptz not null default now(),
      primary key (version_id, keyid))`.execute(db);
  await sql`create index version_signatures_keyid_idx on version_signatures (keyid)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table if exists version_signatures`.execute(db);
  await sql`drop table if exists registry_signing_keys`.execute(db);
}
