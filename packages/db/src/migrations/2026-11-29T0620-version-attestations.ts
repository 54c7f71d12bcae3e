import { type Kysely, sql } from 'kysely';

// Frozen in time: never import app code here, never edit after it has shipped. Add a new file instead.
// Issue 30, provenance attestations (docs/provenance.md, "Provenance attestations"): the registry attests
// where a version came from (an in-toto statement of SLSA provenance in a DSSE envelope it signs).
// - `version_attestations`: one envelope per version and key, for versions built from a known commit.
// - `publish_runs`: the claims of the CI OIDC token a publish verified (workflow, run, commit, event),
//   which a CI publish's attestation names; null for a publish by user token or webhook.
// - `package_versions.indexing_run_id`: the indexing run that created the version, the link from a
//   version to the publish run that asked for it (publish_runs.indexing_run_id); null for versions from
//   before it was recorded and for uploads. Indexing runs are never deleted, and a version never changes
//   (pkgreg_guard_package_version), so the reference has no ON DELETE action.

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table version_attestations (
      version_id uuid not null references package_versions ("id") on delete cascade,
      keyid text not null references registry_signing_keys (keyid),
      envelope jsonb not null,
      created_at timestamptz not null default now(),
      primary key (version_id, keyid))`.execute(db);
  await sql`create index version_attestations_keyid_idx on version_attestations (keyid)`.execute(db);
  await sql`
    alter table publish_runs
      add column oidc_workflow_ref text,
      add column oidc_ref text,
      add column oidc_run_id text,
      add column oidc_run_attempt text,
      add column oidc_sha text,
      add column oidc_event_name text`.execute(db);
  await sql`
    alter table package_versions
      add column indexing_run_id uuid references indexing_runs ("id")`.execute(db);
  await sql`
    create index package_versions_indexing_run_idx on package_versions (indexing_run_id)
      where indexing_run_id is not null`.execute(db);
  await sql`create index publish_runs_indexing_run_idx on publish_runs (indexing_run_id)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop index if exists publish_runs_indexing_run_idx`.execute(db);
  await sql`alter table package_versions drop column if exists indexing_run_id`.execute(db);
  await sql`
    alter table publish_runs
      drop column if exists oidc_workflow_ref,
      drop column if exists oidc_ref,
      drop column if exists oidc_run_id,
      drop column if exists oidc_run_attempt,
      drop column if exists oidc_sha,
      drop column if exists oidc_event_name`.execute(db);
  await sql`drop table if exists version_attestations`.execute(db);
}
