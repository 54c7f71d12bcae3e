import { requirePool } from '@pkgreg/db';
import { useTestDatabase } from '@pkgreg/db/vitest';
import { sql } from 'kysely';
import { beforeAll, describe, expect, it } from 'vitest';
import { rebuildSearchTables } from '../src/search/search.service.js';
import { packageRow } from './fixtures.js';

// The derived tables are rebuilt beside the live ones and swapped in under exclusive locks, while
// searches read them under shared locks in orders of their own (search-tables.repository.ts).

const t = useTestDatabase();

beforeAll(async () => {
  await t.db
    .insertInto('packages')
    .values([packageRow({ name: 'swap-me' })])
    .execute();
  await rebuildSearchTables(t.db);
});

/** Until the swap waits for `table`, which the reader holds. */
async function swapWaitingFor(table: string): Promise<void> {
  for (let i = 0; i < 500; i += 1) {
    const { rows } = await sql<{ n: number }>`
      select count(*)::int as n from pg_locks l join pg_class c on c.oid = l.relation
      where c.relname = ${table} and not l.granted`.execute(t.db);
    if ((rows[0]?.n ?? 0) > 0) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`the swap never waited for ${table}`);
}

describe('swapping the search tables in', () => {
  it('gives way to a search holding a table it needs: no deadlock, the search answers, the swap lands', async () => {
    const reader = await requirePool(t.db, 'the test').connect();
    try {
      // A search that has read the last table of the swap's order and goes on to the first.
      await reader.query('begin');
      await reader.query('select count(*) from package_private_search_keys');
      const rebuild = rebuildSearchTables(t.db);
      await swapWaitingFor('package_private_search_keys');
      // Before the swap gave way, this waited for the swap while the swap waited for it: Postgres
      // found the deadlock after a second and cancelled one of the two.
      const read = await reader.query('select count(*)::int as n from package_search_docs');
      expect(read.rows[0].n).toBe(1);
      await reader.query('commit');
      await rebuild;
    } finally {
      reader.release();
    }
    const { rows } = await sql<{ n: number }>`
      select count(*)::int as n from pg_class where relname like 'package_%search%_next'`.execute(t.db);
    expect(rows[0]?.n).toBe(0);
  });
});
