import { createHash } from 'node:crypto';
import { type Db, queryNamed } from '@pkgreg/db';
import type { RawBuilder } from 'kysely';

/**
 * Distinct statement texts run as named statements; past this, new ones run unnamed, as each named one
 * holds plan-cache memory on every connection that ran it.
 */
const MAX_NAMED_SEARCH_STATEMENTS = 32;
const namedSearchStatements = new Set<string>();

/**
 * Runs a search statement prepared, one name per distinct text, so that each connection plans it once.
 * The statements pass what a custom plan would estimate by through sub-selects, so a custom plan costs
 * what the generic one does and Postgres keeps the generic one after five.
 */
export async function runNamed<R>(db: Db, query: RawBuilder<R>): Promise<R[]> {
  const compiled = query.compile(db);
  const name = `pkgreg_search_${createHash('sha1').update(compiled.sql).digest('hex').slice(0, 20)}`;
  if (namedSearchStatements.has(name) || namedSearchStatements.size < MAX_NAMED_SEARCH_STATEMENTS) {
    namedSearchStatements.add(name);
    return queryNamed<R & object>(db, name, compiled.sql, compiled.parameters);
  }
  return (await db.executeQuery<R>(compiled)).rows;
}
