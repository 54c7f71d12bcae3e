import { type Kysely, sql } from 'kysely';
import { type Migration, type MigrationResultSet, Migrator } from 'kysely/migration';
import { quoteIdent } from './create-db.js';
import { migrations } from './migrations/index.js';

export interface MigrateOptions {
  /** Run the migrations inside this schema (hosted tenants); created when missing. */
  schema?: string;
  /** The migrations to bring the database to; default every shipped one. */
  migrations?: Record<string, Migration>;
}

async function run(
  db: Kysely<any>,
  set: Record<string, Migration>,
  schema?: string,
): Promise<MigrationResultSet> {
  // With a schema, the migration tables live in it too: otherwise Kysely finds public's
  // kysely_migration, takes every migration as done and never creates the tenant's tables.
  const migrator = new Migrator({
    db,
    provider: { getMigrations: async () => set },
    ...(schema ? { migrationTableSchema: schema } : {}),
    // Branches merge: a migration written on one may sort before another's already applied to a
    // database. By default Kysely then refuses every later run on that database; this applies the
    // late one next instead.
    allowUnorderedMigrations: true,
  });
  const result = await migrator.migrateToLatest();
  if (result.error) {
    const failed = result.results?.find((r) => r.status === 'Error');
    throw new Error(`migration ${failed?.migrationName ?? '(unknown)'} failed`, { cause: result.error });
  }
  return result;
}

/** Brings the database to the latest migration. The same migrator runs in dev, tests and deploys. */
export async function migrateToLatest(
  db: Kysely<any>,
  options: MigrateOptions = {},
): Promise<MigrationResultSet> {
  const { schema } = options;
  const set = options.migrations ?? migrations;
  if (!schema) return run(db, set);
  // Migrations use raw SQL too, so the tenant schema is set on the connection, not per query.
  await db.schema.createSchema(schema).ifNotExists().execute();
  return db.connection().execute(async (conn) => {
    await sql.raw(`set search_path to ${quoteIdent(schema)}, public`).execute(conn);
    try {
      return await run(conn, set, schema);
    } finally {
      await sql`reset search_path`.execute(conn);
    }
  });
}
