import { type Kysely, sql } from 'kysely';

// Frozen in time: never import app code here, never edit after it has shipped. Add a new file instead.
// Issue 30, attestations of CI uploads (docs/provenance.md, "Provenance attestations"): a version a
// trusted publisher's CI job uploaded keeps what the job's verified OIDC token said of its source (the
// repository, the commit it ran on, the workflow and run) and the folder the uploader named, so the
// registry attests it as it attests an indexed version. One row per version, written with the version
// in the upload's transaction; like the version, never changed.

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table version_ci_uploads (
      version_id uuid primary key references package_versions ("id") on delete cascade,
      issuer text not null,
      repository_url text not null,
      "commit" text not null,
      path text not null,
      run jsonb not null,
      created_at timestamptz not null default now())`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table if exists version_ci_uploads`.execute(db);
}
