import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb, createPool, poolOf, queryNamed, requirePool } from '../src/index.js';
import { createTestDatabase, type TestDatabase } from '../src/testing.js';

let t: TestDatabase;

beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t?.destroy();
});

describe('createPool (packages/db)', () => {
  it('sends `settings` as startup options on every connection, beside the schema search_path', async () => {
    const pool = createPool(t.url, {
      max: 2,
      schema: 'tenant one',
      settings: { plan_cache_mode: 'force_generic_plan', statement_timeout: '5s' },
    });
    try {
      const [a, b] = await Promise.all([pool.connect(), pool.connect()]);
      const rows = [];
      for (const client of [a, b]) {
        try {
          const r = await client.query(
            "select current_setting('plan_cache_mode') as mode, current_setting('statement_timeout') as timeout, current_setting('search_path') as path",
          );
          rows.push(r.rows[0]);
        } finally {
          client.release();
        }
      }
      // A space in the schema name survives: libpq's option syntax needs it backslash-escaped.
      for (const row of rows)
        expect(row).toEqual({ mode: 'force_generic_plan', timeout: '5s', path: '"tenant one",public' });
    } finally {
      await pool.end();
    }
  });
});

describe('poolOf (packages/db)', () => {
  it('gives the pool under a Db made by createDb, and nothing for its transactions', async () => {
    const db = createDb(t.url, { max: 1 });
    try {
      const pool = poolOf(db);
      expect(pool).toBeDefined();
      expect(requirePool(db, 'the test')).toBe(pool);
      // The very pool Kysely uses: a session setting made through it is seen by a query through db.
      const client = await pool?.connect();
      try {
        await client?.query("set application_name = 'through-the-pool'");
      } finally {
        client?.release();
      }
      const { rows } = await sql<{
        name: string;
      }>`select current_setting('application_name') as name`.execute(db);
      expect(rows[0]?.name).toBe('through-the-pool');
      await db.transaction().execute(async (trx) => {
        expect(poolOf(trx)).toBeUndefined();
        expect(() => requirePool(trx, 'the test')).toThrow('the test needs a Db made by createDb');
      });
    } finally {
      await db.destroy();
    }
  });
});

describe('queryNamed (packages/db)', () => {
  it('prepares the statement once per pool connection, and runs it unnamed inside a transaction', async () => {
    const db = createDb(t.url, { max: 1 });
    try {
      const text = 'select $1::int + 1 as n';
      expect(await queryNamed<{ n: number }>(db, 'pkgreg_test_plus_one', text, [1])).toEqual([{ n: 2 }]);
      expect(await queryNamed<{ n: number }>(db, 'pkgreg_test_plus_one', text, [41])).toEqual([{ n: 42 }]);
      const prepared = await sql<{ name: string }>`select name from pg_prepared_statements`.execute(db);
      expect(prepared.rows.map((r) => r.name)).toEqual(['pkgreg_test_plus_one']);
      await db.transaction().execute(async (trx) => {
        await sql`create temporary table seen (v int) on commit drop`.execute(trx);
        await sql`insert into seen values (7)`.execute(trx);
        // The transaction's own connection: it sees the uncommitted row.
        const rows = await queryNamed<{ v: number }>(trx, 'pkgreg_test_seen', 'select v from seen', []);
        expect(rows).toEqual([{ v: 7 }]);
      });
      const after = await sql<{ name: string }>`select name from pg_prepared_statements`.execute(db);
      expect(after.rows.map((r) => r.name)).toEqual(['pkgreg_test_plus_one']);
    } finally {
      await db.destroy();
    }
  });
});
