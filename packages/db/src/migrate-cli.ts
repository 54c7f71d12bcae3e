import { createDb } from './create-db.js';
import { ensureDatabase } from './ensure-database.js';
import { migrateToLatest } from './migrate.js';

// `pnpm db:migrate`: creates the database when missing, then migrates it. DATABASE_URL or the local default.
const url = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/pkgreg';
await ensureDatabase(url);
const db = createDb(url, { max: 1, applicationName: 'pkgreg-migrate' });
try {
  const { results } = await migrateToLatest(db);
  const applied = results?.filter((r) => r.status === 'Success').map((r) => r.migrationName) ?? [];
  console.log(applied.length ? `applied: ${applied.join(', ')}` : 'database is up to date');
} finally {
  await db.destroy();
}
