import { PGlite } from '@electric-sql/pglite';
import { intarray } from '@electric-sql/pglite/contrib/intarray';
import { Kysely, PGliteDialect } from 'kysely';
import type { Db } from './create-db.js';
import type { Database } from './database.js';

// An embedded PostgreSQL (PGlite: Postgres compiled to WASM, in this process) behind the same Kysely
// `Db` as createDb, so a local runtime on a laptop runs our migrations, memory and tasks with no
// PostgreSQL server. A subpath of its own (`@pkgreg/db/embedded`) so pg-only users never load it.

export interface EmbeddedDbOptions {
  /** Folder holding the database files; none keeps the database in memory (gone at exit). */
  dataDir?: string;
}

/**
 * Opens (creating on first use) the embedded database. One connection: Kysely runs its queries one at a
 * time and a transaction holds it until commit. One process may open a data folder at a time.
 */
export async function createEmbeddedDb(options: EmbeddedDbOptions = {}): Promise<Db> {
  // intarray: the registry search migration creates it; every migration runs, whatever the runtime uses.
  const pglite = await PGlite.create(options.dataDir, { extensions: { intarray } });
  return new Kysely<Database>({ dialect: new PGliteDialect({ pglite }) });
}
