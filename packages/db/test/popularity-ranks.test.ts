import { sql } from 'kysely';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../src/testing.js';

// pkgreg_refresh_popularity_ranks (2026-11-28T2210-popularity-ranks-function), the one copy of the
// popularity rebuild; registry-api's discovery tests check the orders through the API.

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t?.destroy();
});

async function addPackage(name: string, uniqueDownloads: number, extra: Record<string, unknown> = {}) {
  const row = await t.db
    .insertInto('packages')
    .values({
      scope: 'acme',
      name,
      source_repo: 'acme/skills',
      repo_owner: 'acme',
      skill_md_raw: '',
      frontmatter: '{}',
      unique_download_count: uniqueDownloads,
      ...extra,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

it('ranks visible packages by unique downloads and weighted recent days, and records its inputs', async () => {
  const a = await addPackage('a', 5);
  const b = await addPackage('b', 9);
  const c = await addPackage('c', 5);
  await addPackage('hidden', 100, { status: 'delisted' });
  await addPackage('held', 100, { quarantined_at: new Date() });
  // Trending: b downloaded 2 today (score 14); a 3 six days ago (score 3); c none.
  await sql`insert into package_downloads_daily (package_id, day, count) values
    (${b}, (now() at time zone 'UTC')::date, 2),
    (${a}, (now() at time zone 'UTC')::date - 6, 3),
    (${c}, (now() at time zone 'UTC')::date - 7, 50)`.execute(t.db);

  // Twice on one connection: the refresher's pooled connection calls it again and again.
  await t.db.connection().execute(async (conn) => {
    await sql`select pkgreg_refresh_popularity_ranks(7, '2026-11-28')`.execute(conn);
    await sql`select pkgreg_refresh_popularity_ranks(8, '2026-11-29')`.execute(conn);
  });

  const ranks = await t.db
    .selectFrom('package_popularity_ranks as r')
    .innerJoin('packages as p', 'p.id', 'r.id')
    .select(['p.name', 'r.downloads_asc', 'r.downloads_desc', 'r.trending_asc', 'r.trending_desc'])
    .orderBy('p.name')
    .execute();
  expect(ranks).toEqual([
    { name: 'a', downloads_asc: 1, downloads_desc: 2, trending_asc: 2, trending_desc: 2 },
    { name: 'b', downloads_asc: 3, downloads_desc: 1, trending_asc: 3, trending_desc: 1 },
    { name: 'c', downloads_asc: 2, downloads_desc: 3, trending_asc: 1, trending_desc: 3 },
  ]);
  const state = await sql<{ counter: string; day: string }>`
    select popularity_counter::text as counter, to_char(popularity_day, 'YYYY-MM-DD') as day
    from package_derived_state`.execute(t.db);
  expect(state.rows).toEqual([{ counter: '8', day: '2026-11-29' }]);
  const indexes = await sql<{ indexname: string }>`
    select indexname from pg_indexes where tablename = 'package_popularity_ranks' order by indexname`.execute(
    t.db,
  );
  expect(indexes.rows.map((r) => r.indexname)).toEqual([
    'package_popularity_ranks_downloads_asc_key',
    'package_popularity_ranks_downloads_desc_key',
    'package_popularity_ranks_pkey',
    'package_popularity_ranks_trending_asc_key',
    'package_popularity_ranks_trending_desc_key',
  ]);
});
