import { setTimeout } from 'node:timers/promises';
import type { Db } from '@pkgreg/db';
import { type RawBuilder, sql } from 'kysely';
import { rankingOrder } from './search-ranking.js';

/** The longest lexeme prefix pkgreg_search_keys stores (migration 2026-11-21T1400-search-keys). */
export const SEARCH_KEY_LENGTH = 4;
/** Positions per block of package_search_blocks as log2 (2^16 = 65,536); tests use smaller blocks. */
export const SEARCH_BLOCK_SHIFT = 16;
/** Keys in fewer packages than this have no blocks: a term that rare is answered from the GIN index. */
export const SEARCH_BLOCK_MIN_DOCS = 3000;

export interface SearchTablesOptions {
  blockShift: number;
  blockMinDocs: number;
}

export const DEFAULT_SEARCH_TABLES: SearchTablesOptions = {
  blockShift: SEARCH_BLOCK_SHIFT,
  blockMinDocs: SEARCH_BLOCK_MIN_DOCS,
};

/** The tables derived from packages for search; each is built as `<table>_next`, then swapped in. */
const SEARCH_TABLES = [
  'package_search_docs',
  'package_search_lexemes',
  'package_search_prefixes',
  'package_search_blocks',
  'package_search_name_keys',
  'package_search_initials',
  'package_search_facets',
  'package_search_facet_stats',
  'package_private_search_docs',
  'package_private_search_groups',
  'package_private_search_keys',
];

/** How long the swap waits for a table a search holds before it gives way, and how often it tries. */
const SWAP_LOCK_TIMEOUT_MS = 200;
const SWAP_ATTEMPTS = 30;

/** Constraints other than the primary key, whose index is renamed with its table. */
const OTHER_CONSTRAINTS: Record<string, string[]> = { package_private_search_docs: ['id_key'] };

/** Every filter key's positions, before complements replace the common ones (dropped once used). */
const FACET_POSITIONS = 'package_search_facet_positions_next';

/** Drops what an interrupted rebuild left. */
export async function dropNextTables(db: Db): Promise<void> {
  for (const table of SEARCH_TABLES) {
    await sql`drop table if exists ${sql.table(`${table}_next`)}`.execute(db);
  }
  await sql`drop table if exists ${sql.table(FACET_POSITIONS)}`.execute(db);
}

/** Creates `<table>_next` as `select`, with `key` as its primary key. */
async function createNextTable(
  db: Db,
  table: string,
  select: RawBuilder<unknown>,
  key: string,
): Promise<void> {
  const next = `${table}_next`;
  await sql`create table ${sql.table(next)} as ${select}`.execute(db);
  await sql`alter table ${sql.table(next)}
    add constraint ${sql.id(`${next}_pkey`)} primary key (${sql.raw(key)})`.execute(db);
}

/**
 * Visible public packages' vectors, physically in ranking order: a row's `ord` is its ranking position.
 * Private packages are in none of search's tables (counts, facets and statistics included): a reader
 * with private access gets its own merged in by search.service.ts.
 */
export async function createNextDocs(db: Db): Promise<void> {
  const select = sql`
    select (row_number() over (order by ${rankingOrder()}))::int as ord, id, search_vector
    from packages where status <> 'delisted' and quarantined_at is null and not private
    order by ${rankingOrder()}`;
  await createNextTable(db, 'package_search_docs', select, 'ord');
}

/** The first characters of each row's lexemes (migration 2026-11-25T0300-search-initials). */
export async function createNextInitials(db: Db): Promise<void> {
  const select = sql`
    select ord, pkgreg_search_initials(search_vector) as initials from package_search_docs_next order by ord`;
  await createNextTable(db, 'package_search_initials', select, 'ord');
}

/** Documents per lexeme, the planner's statistics. */
export async function createNextLexemes(db: Db): Promise<void> {
  const select = sql`
    select word as lexeme, ndoc from ts_stat('select search_vector from packages where status <> ''delisted'' and quarantined_at is null and not private')`;
  await createNextTable(db, 'package_search_lexemes', select, 'lexeme');
}

/** Documents and lexemes per prefix of 1 to SEARCH_KEY_LENGTH characters: a lookup instead of a sum. */
export async function createNextPrefixes(db: Db): Promise<void> {
  const select = sql`
    select left(lexeme, n) as prefix, sum(ndoc)::bigint as docs, count(*)::int as lexemes
    from package_search_lexemes_next, generate_series(1, ${sql.lit(SEARCH_KEY_LENGTH)}) n
    where length(lexeme) >= n
    group by 1`;
  await createNextTable(db, 'package_search_prefixes', select, 'prefix');
}

/** The keys a lexeme gives (pkgreg_search_keys): itself, and its first 2 to SEARCH_KEY_LENGTH characters. */
function keysOf(lexeme: RawBuilder<unknown>): RawBuilder<unknown> {
  return sql`(
    select ${lexeme} union select left(${lexeme}, n) from generate_series(2, ${sql.lit(SEARCH_KEY_LENGTH)}) n
    where length(${lexeme}) > n)`;
}

/**
 * Positions per (key, block), for the keys the planner looks up (prefix keys, and whole lexemes for
 * narrow terms) that the statistics put in at least blockMinDocs packages; prefix sums over-count a
 * little, so a few rarer prefixes get blocks too.
 */
export async function createNextBlocks(
  db: Db,
  { blockShift, blockMinDocs }: SearchTablesOptions,
): Promise<void> {
  const select = sql`
    select k.key, (d.ord >> ${sql.lit(blockShift)})::int4 as block, uniq(sort(array_agg(d.ord))) as ords
    from package_search_docs_next d
    cross join lateral unnest(tsvector_to_array(d.search_vector)) l(lexeme)
    cross join lateral ${keysOf(sql`l.lexeme`)} k(key)
    where k.key in (
        select prefix from package_search_prefixes_next where length(prefix) >= 2 and docs >= ${sql.lit(blockMinDocs)})
      or k.key in (select lexeme from package_search_lexemes_next where ndoc >= ${sql.lit(blockMinDocs)})
    group by 1, 2`;
  await createNextTable(db, 'package_search_blocks', select, 'key, block');
}

/**
 * Positions per key of the name (`a`, weight A) and scope (`b`, weight B) lexemes, however rare, first
 * characters included: a one-character term has no other key, so its name positions come from here.
 */
export async function createNextNameKeys(db: Db): Promise<void> {
  const select = sql`
    select k.key,
      uniq(sort(coalesce(array_agg(d.ord) filter (where 'A' = any(l.weights)), '{}'))) as a,
      uniq(sort(coalesce(array_agg(d.ord) filter (where 'B' = any(l.weights)), '{}'))) as b
    from package_search_docs_next d
    cross join lateral unnest(ts_filter(d.search_vector, '{a,b}')) l
    cross join lateral (select key from ${keysOf(sql`l.lexeme`)} x(key) union select left(l.lexeme, 1)) k(key)
    group by 1`;
  await createNextTable(db, 'package_search_name_keys', select, 'key');
}

/**
 * The filters' tables (migration 2026-11-25T1700-registry-discovery): each filter key's positions by
 * block (package_search_facets), from pkgreg_facet_keys of each ranked package, and whole (block -1); its
 * count, and the key its positions are stored under (package_search_facet_stats). A key held by more
 * than half of the packages is stored as `!key`, the positions without it.
 */
export async function createNextFacets(db: Db, { blockShift }: SearchTablesOptions): Promise<void> {
  const shift = sql.lit(blockShift);
  await sql`create table ${sql.table(FACET_POSITIONS)} as
    select k.key, (d.ord >> ${shift})::int4 as block, sort(array_agg(d.ord)) as ords
    from package_search_docs_next d join packages p on p.id = d.id
    cross join lateral unnest(pkgreg_facet_keys(p.kind, p.category, p.tags, p.compatibility, p.license,
      p.verified, p.status, p.risk, p.scope)) k(key)
    group by 1, 2`.execute(db);
  const last = sql`(select coalesce(max(ord), 0) from package_search_docs_next)`;
  await createNextTable(
    db,
    'package_search_facet_stats',
    sql`select key, sum(icount(ords))::int4 as docs,
        case when sum(icount(ords)) * 2 > ${last} then '!' || key else key end as stored
      from ${sql.table(FACET_POSITIONS)} group by key`,
    'key',
  );
  // Blocks first (the complements computed per block), then each key's whole list from its blocks.
  const blocks = sql`
    select f.key, f.block, f.ords from ${sql.table(FACET_POSITIONS)} f
      join package_search_facet_stats_next st on st.key = f.key and st.stored = st.key
    union all
    select c.stored, c.block, c.ords from (
      select st.stored, g.block, array(select generate_series(greatest(g.block << ${shift}, 1),
          least(((g.block + 1) << ${shift}) - 1, ${last})))::int4[] - coalesce(f.ords, '{}') as ords
      from package_search_facet_stats_next st
      cross join generate_series(0, ${last} >> ${shift}) g(block)
      left join ${sql.table(FACET_POSITIONS)} f on f.key = st.key and f.block = g.block
      where st.stored <> st.key
    ) c where cardinality(c.ords) > 0`;
  await createNextTable(
    db,
    'package_search_facets',
    sql`with b as materialized (${blocks})
      select key, block, ords from b
      union all
      select key, ${sql.lit(-1)}, pkgreg_int_union(ords order by block) from b group by key`,
    'key, block',
  );
  await sql`drop table ${sql.table(FACET_POSITIONS)}`.execute(db);
}

/**
 * The visible private packages in ranking order (docs/search.md, "Private packages") with their result
 * columns, the row of ord 1 with `mark`: this statement's snapshot. A row last changed by a transaction
 * it could not see may be missing or stale here, so a reader's search reads those rows live.
 */
export async function createNextPrivateDocs(db: Db): Promise<void> {
  const select = sql`
    select d.*, case when d.ord = 1 then pg_current_snapshot() end as mark
    from (select (row_number() over (order by ${rankingOrder()}))::int as ord, id, scope, name, description,
        kind, category, source_repo, token_count, verified, repo_stars, risk
      from packages where private and status <> 'delisted' and quarantined_at is null) d
    order by d.ord`;
  await createNextTable(db, 'package_private_search_docs', select, 'ord');
  await sql`alter table package_private_search_docs_next
    add constraint package_private_search_docs_next_id_key unique (id)`.execute(db);
}

/**
 * The groups of private positions: each organisation's scopes holding visible private packages, when
 * they are two or more (one scope gains nothing), keyed `~<organisation id>`. A scope is in one group at
 * most: the organisation its settings name, else the one linked to the code-host organisation owning it.
 * Any partition of scopes would be correct (a reader uses a group only when it reads all its members);
 * organisations are the sets their members read whole.
 */
export async function createNextPrivateGroups(db: Db): Promise<void> {
  const select = sql`
    with owned as (
      select distinct on (d.scope) d.scope, o.organization_id
      from (select distinct scope from package_private_search_docs_next) d
      cross join lateral (
        select s.organization_id, 0 as rank from scope_settings s
          where s.scope = d.scope and s.organization_id is not null
        union all
        select o."id", 1 from scope_owners so join auth_organization o on o."githubOrgId" = so.owner_id
          where so.scope = d.scope) o
      order by d.scope, o.rank, o.organization_id)
    select scope, '~' || organization_id as grp, size from (
      select scope, organization_id, (count(*) over (partition by organization_id))::int4 as size from owned) g
    where size >= 2`;
  await createNextTable(db, 'package_private_search_groups', select, 'scope');
}

/**
 * Private positions per `<scope>/<key>`, the keys of keysOf (a lexeme, its first 2 to SEARCH_KEY_LENGTH
 * characters) under the package's scope: anywhere, in the name (`a`) and in the name or scope (`ab`);
 * and per `<group>/<key>`, their unions over each group's scopes. Built from the rows as the docs saw
 * them: a row changed since is searched live and left out of these.
 */
export async function createNextPrivateKeys(db: Db): Promise<void> {
  const select = sql`
    with k as materialized (
      select (d.scope || '/' || k.key) collate "C" as key, d.scope,
        uniq(sort(array_agg(d.ord))) as ords,
        uniq(sort(coalesce(array_agg(d.ord) filter (where 'A' = any(l.weights)), '{}'))) as a,
        uniq(sort(coalesce(array_agg(d.ord) filter (where l.weights && '{A,B}'), '{}'))) as ab
      from package_private_search_docs_next d join packages p on p.id = d.id
      cross join lateral unnest(p.search_vector) l
      cross join lateral ${keysOf(sql`l.lexeme`)} k(key)
      group by 1, 2)
    select key, ords, a, ab from k
    union all
    select (g.grp || substr(k.key, length(k.scope) + 1)) collate "C",
      pkgreg_int_union(k.ords), pkgreg_int_union(k.a), pkgreg_int_union(k.ab)
    from k join package_private_search_groups_next g on g.scope = k.scope
    group by 1`;
  await createNextTable(db, 'package_private_search_keys', select, 'key');
}

/** Swaps every `_next` table in at once: the lock is held only for the drops and renames. */
export async function swapInNextTables(db: Db): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await db.transaction().execute(async (trx) => {
        // Searches lock these tables in orders of their own: a swap that held one while waiting for
        // another a search holds would deadlock with it, and Postgres would cancel one of the two (a
        // search answering 500). The swap gives way instead, before deadlock detection would run.
        await sql.raw(`set local lock_timeout = '${SWAP_LOCK_TIMEOUT_MS}ms'`).execute(trx);
        for (const table of SEARCH_TABLES) {
          await sql`drop table ${sql.table(table)}`.execute(trx);
          await sql`alter table ${sql.table(`${table}_next`)} rename to ${sql.table(table)}`.execute(trx);
          for (const suffix of ['pkey', ...(OTHER_CONSTRAINTS[table] ?? [])]) {
            await sql`alter index ${sql.table(`${table}_next_${suffix}`)} rename to ${sql.table(`${table}_${suffix}`)}`.execute(
              trx,
            );
          }
        }
      });
      return;
    } catch (error) {
      const lockNotAvailable = (error as { code?: unknown } | null)?.code === '55P03';
      if (!lockNotAvailable || attempt >= SWAP_ATTEMPTS) throw error;
      // The tables it waited for are free once the searches holding them end.
      await setTimeout(Math.min(50 * attempt, 1000));
    }
  }
}
