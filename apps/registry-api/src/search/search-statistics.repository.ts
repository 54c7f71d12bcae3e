import type { Db } from '@pkgreg/db';
import { type RawBuilder, sql } from 'kysely';
import { runNamed } from './named-statements.js';
import { SEARCH_KEY_LENGTH } from './search-tables.repository.js';

/** What the planner knows of one query term's prefix, as of the last rebuild. */
export interface PrefixStats {
  /** Documents holding a lexeme with this prefix (or its english stem's), summed over lexemes. */
  docs: number;
  /** How many stored lexemes the prefix expands to, counted up to `maxExpansions + 1`. */
  expansions: number;
  /** Those lexemes when there are at most `maxExpansions` of them; empty otherwise. */
  lexemes: string[];
  /**
   * The search keys (pkgreg_search_keys) every match holds one of: the first SEARCH_KEY_LENGTH
   * characters of the prefix and of its stem; null when either is shorter than 2 (no such key exists).
   */
  keys: string[] | null;
  /** Documents holding a lexeme that starts with one of the keys, summed like `docs`. */
  keyDocs: number;
  /** Every key has its positions in package_search_blocks, or holds none (false when `keys` is null). */
  blocked: boolean;
  /** `lexemes` is not empty and every one of them has its own positions in package_search_blocks. */
  lexemesBlocked: boolean;
  /**
   * package_search_prefixes holds the prefix. For one character, that also says the last rebuild stored
   * first-character name keys (both came in the same change, and a rebuild swaps every table at once).
   */
  counted: boolean;
}

interface StatsRow {
  docs: number;
  /** package_search_prefixes' count of lexemes, when the prefix is read from there. */
  table_lexemes: number | null;
  lexemes: string[] | null;
  keys: string[] | null;
  key_docs: number | null;
  blocked: boolean | null;
  lexemes_blocked: boolean;
}

/**
 * Per prefix and its English stem (descriptions are stemmed), from the statistics tables: the documents
 * it may reach, the stored lexemes it expands to, and its prefix keys. Sums over-count documents holding
 * several lexemes of one prefix, which planning tolerates; a short prefix is one row of
 * package_search_prefixes, as summing its many lexemes per search would cost more than the search.
 */
export async function prefixStats(db: Db, prefixes: string[], maxExpansions: number): Promise<PrefixStats[]> {
  if (!Number.isInteger(maxExpansions) || maxExpansions < 0) throw new Error('maxExpansions: a whole number');
  const rows = await runNamed(db, statsQuery(prefixes, maxExpansions));
  return rows.map((row) => {
    // Listed up to maxExpansions + 1 when not counted by the table: one more than that means broad.
    const lexemes = row.lexemes ?? [];
    return {
      docs: row.docs,
      expansions: Math.min(row.table_lexemes ?? lexemes.length, maxExpansions + 1),
      lexemes: lexemes.length <= maxExpansions ? lexemes : [],
      keys: row.keys,
      keyDocs: row.key_docs ?? row.docs,
      blocked: Boolean(row.keys && row.blocked),
      lexemesBlocked: lexemes.length > 0 && lexemes.length <= maxExpansions && row.lexemes_blocked,
      counted: row.table_lexemes !== null,
    };
  });
}

/**
 * The statistics statement, planned once per connection rather than per search: the code's constants are
 * written into the text and the prefixes reach the plan through a sub-select, so no plan sees their
 * values and Postgres keeps the generic plan.
 */
function statsQuery(prefixes: string[], maxExpansions: number): RawBuilder<StatsRow> {
  const keyLength = sql.lit(SEARCH_KEY_LENGTH);
  const inRange = (from: RawBuilder<unknown>) =>
    sql`(s.lexeme >= ${from} and s.lexeme < ${from} || chr(1114111))`;
  const either = sql`(${inRange(sql`l.prefix`)} or ${inRange(sql`l.stem`)})`;
  // A key is in package_search_blocks when it was frequent at the rebuild, or holds nothing at all
  // (absent from package_search_prefixes: `usin`, since `using` is stored as its stem `use`).
  const keyBlocked = (
    key: RawBuilder<unknown>,
  ) => sql`(exists (select 1 from package_search_blocks b where b.key = ${key})
    or not exists (select 1 from package_search_prefixes p where p.prefix = ${key}))`;
  return sql<StatsRow>`
    select
      coalesce(ps.docs, (select coalesce(sum(s.ndoc), 0) from package_search_lexemes s where ${either})) as docs,
      ps.lexemes as table_lexemes,
      lx.lexemes,
      case when length(l.prefix) >= 2 and length(l.stem) >= 2
        then array(select distinct k from unnest(array[l.prefix_key, l.stem_key]) k) end as keys,
      -- A prefix of at most SEARCH_KEY_LENGTH characters is its own key: key_docs = docs, not summed twice.
      case when l.prefix_key <> l.prefix or l.stem_key <> l.stem then
        coalesce(pk.docs, (select coalesce(sum(s.ndoc), 0) from package_search_lexemes s
          where ${inRange(sql`l.prefix_key`)} or ${inRange(sql`l.stem_key`)})) end as key_docs,
      ${keyBlocked(sql`l.prefix_key`)} and ${keyBlocked(sql`l.stem_key`)} as blocked,
      -- Every listed lexeme has blocks of its own (each holds at least one document).
      (select coalesce(bool_and(exists (select 1 from package_search_blocks b where b.key = u.lexeme)), false)
        from unnest(lx.lexemes) u(lexeme)) as lexemes_blocked
    from (
      select x.*, left(x.prefix, ${keyLength}) as prefix_key, left(x.stem, ${keyLength}) as stem_key
      from (
        select u.prefix, u.i, coalesce((ts_lexize('english_stem', u.prefix))[1], u.prefix) as stem
        from unnest((select ${prefixes}::text[])) with ordinality as u(prefix, i)
      ) x
    ) l
    left join package_search_prefixes ps
      on ps.prefix = l.prefix and l.stem = l.prefix and length(l.prefix) between 1 and ${keyLength}
    left join package_search_prefixes pk on pk.prefix = l.prefix_key and l.stem_key = l.prefix_key
    cross join lateral (
      select case when coalesce(ps.lexemes, 0) <= ${sql.lit(maxExpansions)} then (select array_agg(x.lexeme) from (
        select s.lexeme from package_search_lexemes s where ${either} limit ${sql.lit(maxExpansions + 1)}) x) end as lexemes
    ) lx
    order by l.i`;
}

/** Rows in package_search_docs (the highest ord: an index probe, not a count). */
export async function countSearchDocs(db: Db): Promise<number> {
  const result = await sql<{ n: number | null }>`select max(ord) as n from package_search_docs`.execute(db);
  return Number(result.rows[0]?.n ?? 0);
}
