import { type Kysely, sql } from 'kysely';

// Frozen in time: never import app code here, never edit after it has shipped. Add a new file instead.

// Skill dependencies (docs/versions.md, Dependencies): what each version's SKILL.md declares in
// `metadata.dependencies`, one row per dependency, in declared order (`position`). `range` is the
// declared semver range; null asks for the latest version. A dependency names a package by scope and
// name, not by id: it may not be in the registry yet, and counts it the moment it is indexed.
//
// Rows are written with their version and never updated (versions are immutable). Versions created
// before this migration get theirs when an indexing run finds their SKILL.md again.
//
// The index on (scope, name) answers "who depends on this package" (dependants, and their count kept on
// packages.dependant_count).
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('package_version_dependencies')
    .addColumn('version_id', 'uuid', (c) => c.notNull().references('package_versions.id').onDelete('cascade'))
    .addColumn('position', 'integer', (c) => c.notNull())
    .addColumn('scope', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('range', 'text')
    .addPrimaryKeyConstraint('package_version_dependencies_pkey', ['version_id', 'scope', 'name'])
    .execute();
  await sql`create index package_version_dependencies_target_idx
    on package_version_dependencies (scope, name, version_id)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('package_version_dependencies').ifExists().execute();
}
