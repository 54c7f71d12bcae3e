import { sql } from 'kysely';
import type { Migration } from 'kysely/migration';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb, migrateToLatest, migrations } from '../src/index.js';
import { createTestDatabase, type TestDatabase } from '../src/testing.js';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t?.destroy();
});

describe('migrations', () => {
  it('creates every table the stack needs (issue: packages/db)', async () => {
    const rows = await sql<{ table_name: string }>`
      select table_name from information_schema.tables where table_schema = 'public'`.execute(t.db);
    const tables = rows.rows.map((r) => r.table_name);
    for (const table of [
      'packages',
      'package_download_batches',
      'indexed_sources',
      'indexing_runs',
      'indexing_rejections',
      'memory_entries',
      'tasks',
      'idempotency_records',
      'oauth_clients',
      'oauth_signing_keys',
      'edge_delegation_keys',
      'audit_records',
      'quarantined_sources',
    ]) {
      expect(tables).toContain(table);
    }
  });

  it('search GIN indexes keep no pending list (fastupdate off: searches never scan unmerged entries)', async () => {
    const rows = await sql<{ relname: string; reloptions: string[] | null }>`
      select c.relname, c.reloptions from pg_class c join pg_am a on a.oid = c.relam
      where a.amname = 'gin' and c.relnamespace = 'public'::regnamespace order by c.relname`.execute(t.db);
    expect(rows.rows.map((r) => r.relname)).toEqual([
      'memory_entries_search_keys_idx',
      'memory_entries_tags_idx',
      'packages_private_search_keys_idx',
      'packages_search_keys_idx',
    ]);
    for (const row of rows.rows) expect(row.reloptions).toContain('fastupdate=off');
  });

  it('pkgreg_search_keys: every lexeme and its first 2, 3 and 4 characters (docs/decisions.md: Registry search)', async () => {
    const rows = await sql<{ keys: string }>`
      select pkgreg_search_keys(to_tsvector('simple', 'database go x'))::text as keys`.execute(t.db);
    expect(rows.rows[0]?.keys).toBe("'da' 'dat' 'data' 'database' 'go' 'x'");
  });

  it('pkgreg_private_search_keys: the search keys, each behind its scope (docs/search.md: Private packages)', async () => {
    const rows = await sql<{ keys: string }>`
      select pkgreg_private_search_keys('acme', to_tsvector('simple', 'database go'))::text as keys`.execute(
      t.db,
    );
    expect(rows.rows[0]?.keys).toBe("'acme/da' 'acme/dat' 'acme/data' 'acme/database' 'acme/go'");
  });

  it('pkgreg_memory_search_keys: words keyed by namespace and field (docs/decisions.md: Memory search)', async () => {
    const rows = await sql<{ keys: string; prefix: string }>`
      select pkgreg_memory_search_keys('app:x',
        setweight(to_tsvector('english', 'Postgres runs'), 'A') ||
        setweight(to_tsvector('simple', 'ops postgres'), 'B'))::text as keys,
        left(md5('app:x'), 8) as prefix`.execute(t.db);
    const { keys, prefix } = rows.rows[0] as { keys: string; prefix: string };
    expect(keys).toBe(['cpostgr', 'crun', 'tops', 'tpostgres'].map((k) => `'${prefix}${k}'`).join(' '));
  });

  it('audit rows have no serial id, and their two time indexes are ascending (rows arrive in time order)', async () => {
    const rows = await sql<{ indexdef: string }>`
      select indexdef from pg_indexes where tablename = 'audit_records' order by indexname`.execute(t.db);
    expect(rows.rows.map((r) => r.indexdef.replace(/^.* USING btree /, ''))).toEqual([
      '(at)',
      '(namespace, at)',
    ]);
    const serial = await sql`select 1 from pg_class where relname = 'audit_records_id_seq'`.execute(t.db);
    expect(serial.rows).toEqual([]);
  });

  it('is idempotent: a second run applies nothing', async () => {
    const { results } = await migrateToLatest(t.db);
    expect(results).toEqual([]);
  });

  it('runs into a tenant schema for hosted backends', async () => {
    await migrateToLatest(t.db, { schema: 'tenant_a' });
    const tenant = createDb(t.url, { schema: 'tenant_a', max: 1 });
    try {
      const rows = await sql<{ s: string }>`select current_schema() as s`.execute(tenant);
      expect(rows.rows[0]?.s).toBe('tenant_a');
      const count = await tenant
        .selectFrom('packages')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirstOrThrow();
      expect(count.n).toBe(0);
    } finally {
      await tenant.destroy();
    }
  });

  it('applies a migration whose name sorts before one already applied (branches merged in between)', async () => {
    const table = (name: string): Migration => ({
      up: async (db) => {
        await db.schema.createTable(name).addColumn('id', 'integer').execute();
      },
    });
    const later = { '2026-01-02T0000-later': table('later_table') };
    const first = await migrateToLatest(t.db, { schema: 'unordered', migrations: later });
    expect(first.results?.map((r) => [r.migrationName, r.status])).toEqual([
      ['2026-01-02T0000-later', 'Success'],
    ]);

    const merged = { '2026-01-01T0000-earlier': table('earlier_table'), ...later };
    const second = await migrateToLatest(t.db, { schema: 'unordered', migrations: merged });
    expect(second.results?.map((r) => [r.migrationName, r.status])).toEqual([
      ['2026-01-01T0000-earlier', 'Success'],
    ]);
    const tables = await sql<{ table_name: string }>`
      select table_name from information_schema.tables where table_schema = 'unordered'
        and table_name like '%_table' order by table_name`.execute(t.db);
    expect(tables.rows.map((r) => r.table_name)).toEqual(['earlier_table', 'later_table']);
    expect((await migrateToLatest(t.db, { schema: 'unordered', migrations: merged })).results).toEqual([]);
  });

  it('names migrations by timestamp so they sort in the order they were written', () => {
    const names = Object.keys(migrations);
    expect(names).toEqual([...names].sort());
    for (const name of names) expect(name).toMatch(/^\d{4}-\d{2}-\d{2}T\d{4}-[a-z0-9-]+$/);
  });
});

describe('packages table', () => {
  it('splits names and scopes on - for prefix search, stems only the description', async () => {
    await t.db
      .insertInto('packages')
      .values({
        scope: 'acme',
        name: 'pdf-editor',
        description: 'Editing PDF documents',
        source_repo: 'acme/skills',
        repo_owner: 'acme',
        skill_md_raw: '---\nname: pdf-editor\n---\n',
        frontmatter: JSON.stringify({ name: 'pdf-editor' }),
      })
      .execute();
    const hit = await sql<{ n: number }>`
      select count(*)::int as n from packages where search_vector @@ to_tsquery('simple', 'pdf:* & edi:*')`.execute(
      t.db,
    );
    expect(hit.rows[0]?.n).toBe(1);
  });

  it('bumps row_version on every update (the ETag source)', async () => {
    const before = await t.db
      .selectFrom('packages')
      .select('row_version')
      .where('name', '=', 'pdf-editor')
      .executeTakeFirstOrThrow();
    await t.db.updateTable('packages').set({ download_count: 5 }).where('name', '=', 'pdf-editor').execute();
    const after = await t.db
      .selectFrom('packages')
      .select(['row_version', 'download_count'])
      .where('name', '=', 'pdf-editor')
      .executeTakeFirstOrThrow();
    expect(after.row_version).toBe(before.row_version + 1);
    expect(after.download_count).toBe(5);
  });

  it('rejects an unknown kind or status', async () => {
    const base = {
      scope: 'acme',
      source_repo: 'acme/x',
      repo_owner: 'acme',
      skill_md_raw: '',
      frontmatter: '{}',
    };
    await expect(
      t.db
        .insertInto('packages')
        .values({ ...base, name: 'a', kind: 'plugin' as never })
        .execute(),
    ).rejects.toThrow();
    await expect(
      t.db
        .insertInto('packages')
        .values({ ...base, name: 'b', status: 'gone' as never })
        .execute(),
    ).rejects.toThrow();
  });
});
