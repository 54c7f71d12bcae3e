import { type Database, type Db, poolOf } from '@pkgreg/db';
import { Kysely, PostgresDialect } from 'kysely';

/** A page's packages as `scope/name`, in order. */
export const names = (page: { results: Array<{ scope: string; name: string }> }) =>
  page.results.map((r) => `${r.scope}/${r.name}`);

/** A Db over `db`'s pool that hands every statement (SQL and parameters) to `seen` as it runs. */
export function loggedDb(
  db: Db,
  seen: (sql: string, parameters: readonly unknown[]) => void,
): Kysely<Database> {
  const pool = poolOf(db);
  if (!pool) throw new Error('the test database has a pool');
  return new Kysely<Database>({
    dialect: new PostgresDialect({ pool }),
    log: (event) => {
      if (event.level === 'query') seen(event.query.sql, event.query.parameters);
    },
  });
}
