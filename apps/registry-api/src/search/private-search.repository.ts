import type { PackageFilters } from '@pkgreg/contracts';
import type { Db } from '@pkgreg/db';
import { privateReadableSql, type ReadAccess } from '@pkgreg/registry';
import { type RawBuilder, sql } from 'kysely';
import { filterPredicate, hasFilters } from './filters.js';
import { runNamed } from './named-statements.js';
import { byTierAndRank, rankingOrder, tierOf } from './search-ranking.js';
import { anywhereQuery, RESULT_COLUMNS, type SearchRow } from './search-sql.js';

// A reader's private matches (docs/search.md, "Private packages"): search's tables hold public packages
// only, so a reader with private access gets its private packages searched apart, ranked by the same
// tiers and order, then merged with the public answer by search.service.ts.
//
// A reader of whole scopes without filters is answered from positions: package_private_search_keys holds
// per `<scope>/<key>` (and per `<group>/<key>` for an organisation's scopes together) the ranking
// positions (package_private_search_docs) of the private packages holding it, so the top matches and
// their count come from unions and intersections of int arrays, and only the page's rows are read (the
// docs hold their result columns). Rows changed since those tables were built are searched live. Filters
// and tokens limited to single packages take the live statement over packages_private_search_keys_idx
// instead (migration 2026-11-29T0210), whose cost follows the number of matches.

/** A match with its tier, for merging in ranking order. */
export type TieredRow = SearchRow & { tier: number };

/** A reader's private matches: the top ones in ranking order, and how many there are in all. */
export interface PrivateMatches {
  rows: TieredRow[];
  total: number;
  /**
   * The public catalog's document count (countSearchDocs), read by the same statement when the answer
   * came from positions, so that a member's search sends no more statements than an anonymous one.
   */
  docs?: number;
}

/** Whether searchPrivate answers from positions (whole scopes, no filters) rather than live. */
export function searchesPositions(access: ReadAccess, filters: PackageFilters): boolean {
  return access.packages.length === 0 && !hasFilters(filters);
}

/** The reader's top `limit` private matches in ranking order, and how many there are in all. */
export async function searchPrivate(
  db: Db,
  access: ReadAccess,
  lexemes: string[],
  filters: PackageFilters,
  limit: number,
): Promise<PrivateMatches> {
  if (!searchesPositions(access, filters)) return searchPrivateLive(db, access, lexemes, filters, limit);
  return searchPrivatePositions(db, [...access.scopes], lexemes, limit).catch((error: unknown) => {
    // While a release before migration 2026-11-29T2300 still runs beside this one, its rebuild can swap
    // in private docs without the result columns (42703, undefined column) until this release's next
    // rebuild: the live statement answers the same, slower, meanwhile.
    if ((error as { code?: string }).code === UNDEFINED_COLUMN)
      return searchPrivateLive(db, access, lexemes, filters, limit);
    throw error;
  });
}

const UNDEFINED_COLUMN = '42703';

const visible = (alias: string) =>
  sql.raw(`${alias}.status <> 'delisted' and ${alias}.quarantined_at is null`);

/**
 * Each term's forms: as typed, and its english stems (the anywhere query's second reading); the
 * weighted queries of the tiers read only the typed form.
 */
function formsOf(lexemes: string[]): RawBuilder<unknown> {
  return sql`
    select l.i, f.form, f.typed
    from unnest((select ${lexemes}::text[])) with ordinality l(lexeme, i)
    cross join lateral (select l.lexeme, true
      union all select s, false from unnest(tsvector_to_array(to_tsvector('english', l.lexeme))) s
        where s <> l.lexeme) f(form, typed)`;
}

/**
 * The stored keys a form matches as a prefix, under one key prefix (a scope or a group): itself for 2-4
 * characters (every lexeme starting with it), the whole lexemes starting with it when longer, and for one
 * character the lexeme itself and every 2-character key starting with it. Keys are compared under "C".
 */
function keysOfForm(form: RawBuilder<unknown>, prefix: RawBuilder<unknown>): RawBuilder<unknown> {
  const key = sql`(${prefix} || '/' || ${form}) collate "C"`;
  const from = sql`k.key >= ${key} and k.key < ${key} || chr(1114111)`;
  return sql`(
    select k.ords, k.a, k.ab from package_private_search_keys k
      where length(${form}) between 2 and 4 and k.key = ${key}
    union all
    select k.ords, k.a, k.ab from package_private_search_keys k where length(${form}) > 4 and ${from}
    union all
    select k.ords, k.a, k.ab from package_private_search_keys k
      where length(${form}) = 1 and ${from} and length(k.key) <= length(${key}) + 1)`;
}

type PositionRow = Partial<TieredRow> & { total: number; docs: number | null };

/**
 * The positions' answer. Per term the union of its keys' positions over the reader's key prefixes (a
 * group whose every scope it reads, its other scopes one by one; anywhere, and for the typed form in the
 * name and in name or scope), intersected over the terms, less the positions of rows changed since the
 * rebuild (when there are any): tier 0 is the name set, tier 1 the name-or-scope set without it, tier 2
 * the rest; each sorted by position, i.e. the ranking order, and a tier's set is only computed when the
 * tiers before it hold fewer than a page (for a common term the differences cost more than the rest).
 * The changed rows are read live (packages_scope_changes_idx, public ones too: a package turned public
 * leaves the count) and tested as the live statement tests them; every other row is as the rebuild
 * stored it (every update but the download fold's moves updated_xid), so the page's rows come from the
 * docs. The statement runs prepared (runNamed) and its lists reach it through
 * sub-selects: a custom plan then estimates what the generic one does, so Postgres keeps the generic plan
 * instead of planning each search again (planning cost more than running it). It also reads the public
 * catalog's document count, for the public plans (searchWithPrivate).
 */
async function searchPrivatePositions(
  db: Db,
  scopes: string[],
  lexemes: string[],
  limit: number,
): Promise<PrivateMatches> {
  const rows = await runNamed(
    db,
    sql<PositionRow>`
    with mark as materialized (select (select mark from package_private_search_docs where ord = 1) as snapshot),
    changed as materialized (
      select ${RESULT_COLUMNS}, d.ord,
        p.private and ${visible('p')} and p.search_vector @@ ${anywhereQuery(lexemes)} as matches,
        ${tierOf(sql`p.search_vector`, lexemes)} as tier
      from mark m
      join packages p on p.scope = any((select ${scopes}::text[])::text[])
        and p.updated_xid >= coalesce(pg_snapshot_xmin(m.snapshot), '0')
      left join package_private_search_docs d on d.id = p.id
      where m.snapshot is null or not pg_visible_in_snapshot(p.updated_xid, m.snapshot)),
    prefixes as materialized (
      select distinct
        case when g.size = count(*) over (partition by g.grp) then g.grp else s.scope end as prefix
      from (select distinct unnest((select ${scopes}::text[])) as scope) s
      left join package_private_search_groups g on g.scope = s.scope),
    terms as (
      select f.i, pkgreg_int_union(k.ords) as anywhere,
        coalesce(pkgreg_int_union(k.a) filter (where f.typed), '{}') as a,
        coalesce(pkgreg_int_union(k.ab) filter (where f.typed), '{}') as ab
      from (${formsOf(lexemes)}) f
      cross join prefixes s
      cross join lateral ${keysOfForm(sql`f.form`, sql`s.prefix`)} k
      group by f.i),
    found as (
      select pkgreg_int_intersect(t.anywhere) as anywhere, pkgreg_int_intersect(t.a) as a,
        pkgreg_int_intersect(t.ab) as ab
      from terms t
      having count(*) = ${lexemes.length}),
    sets as materialized (
      select case when x.ords = '{}' then f.anywhere else f.anywhere - x.ords end as anywhere,
        case when x.ords = '{}' then f.a else f.a - x.ords end as a,
        case when x.ords = '{}' then f.ab else f.ab - x.ords end as ab
      from found f, (select coalesce(array_agg(ord) filter (where ord is not null), '{}') as ords from changed) x),
    top as (
      select t.ord, t.tier from (
        select unnest(subarray(a, 1, ${limit})) as ord, 0 as tier from sets
        union all select unnest(subarray(ab - a, 1, ${limit})), 1 from sets where icount(a) < ${limit}
        union all select unnest(subarray(anywhere - ab, 1, ${limit})), 2 from sets where icount(ab) < ${limit}) t
      order by t.tier, t.ord limit ${limit})
    select n.total, n.docs, r.* from (
      select coalesce((select icount(anywhere) from sets), 0)
        + (select count(*) from changed where matches)::int as total,
        (select max(ord) from package_search_docs) as docs) n
    left join (
      select ${RESULT_COLUMNS}, t.tier from top t join package_private_search_docs p on p.ord = t.ord
      union all
      select c.id, c.scope, c.name, c.description, c.kind, c.category, c.source_repo, c.token_count,
        c.verified, c.repo_stars, c.risk, c.tier from changed c where c.matches) r on true`,
  );
  const total = Number(rows[0]?.total ?? 0);
  const docs = Number(rows[0]?.docs ?? 0);
  const found = rows.flatMap(({ total: _, docs: __, ...row }) =>
    row.id === null || row.id === undefined
      ? []
      : [{ ...(row as TieredRow), private: true, tier: Number(row.tier) }],
  );
  return { rows: found.sort(byTierAndRank).slice(0, limit), total, docs };
}

/**
 * The key query over the reader's scopes: each term (as typed, and its english stem) as
 * `<scope>/<form>`, exact for 2-4 characters (a stored key), a prefix otherwise (cut to 100 characters
 * as the stored keys are); the terms ANDed.
 */
function scopeKeysQuery(lexemes: string[], scopes: string[]): RawBuilder<unknown> {
  return sql`(
    select string_agg(t.q, ' & ')::tsquery from (
      select '(' || string_agg(
          '''' || replace(replace(s.scope || '/' || left(f.form, 100), '\\', '\\\\'), '''', '''''') || ''''
            || case when length(f.form) between 2 and 4 then '' else ':*' end, ' | ') || ')' as q
      from unnest(${lexemes}::text[]) with ordinality l(lexeme, i)
      cross join lateral (select l.lexeme
        union select unnest(tsvector_to_array(to_tsvector('english', l.lexeme)))) f(form)
      cross join unnest(${scopes}::text[]) s(scope)
      group by l.i) t)`;
}

/** Every match read and tested live: for filters and package-limited tokens. */
async function searchPrivateLive(
  db: Db,
  access: ReadAccess,
  lexemes: string[],
  filters: PackageFilters,
  limit: number,
): Promise<PrivateMatches> {
  const scopes = [...new Set([...access.scopes, ...access.packages.map((key) => key.split('/')[0] ?? '')])];
  // `offset 0` keeps the candidates' subquery apart, so they come from the key index however the
  // planner rates the reader's scopes on packages_private_idx (a materialized CTE would copy every row).
  const result = await sql<TieredRow & { total: number }>`
    select ${RESULT_COLUMNS}, true as private, ${tierOf(sql`p.search_vector`, lexemes)} as tier, count(*) over ()::int as total
    from (
      select p.* from packages p
      where p.private and ${visible('p')}
        and pkgreg_private_search_keys(p.scope, p.search_vector) @@ ${scopeKeysQuery(lexemes, scopes)}
      offset 0) p
    where ${privateReadableSql(access, 'p')} and ${filterPredicate(filters)}
      and p.search_vector @@ ${anywhereQuery(lexemes)}
    order by tier, ${rankingOrder('p')}
    limit ${limit}`.execute(db);
  const total = Number(result.rows[0]?.total ?? 0);
  return { rows: result.rows.map(({ total: _, ...row }) => ({ ...row, tier: Number(row.tier) })), total };
}
