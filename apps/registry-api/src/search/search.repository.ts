import { createHash } from 'node:crypto';
import { type Db, queryNamed } from '@pkgreg/db';
import { type RawBuilder, sql } from 'kysely';
import { prefixOperand } from './search-terms.js';

export interface SearchRow {
  id: string;
  scope: string;
  name: string;
  description: string;
  kind: 'skill' | 'composite' | 'workflow' | 'app';
  category: string | null;
  source_repo: string;
  token_count: number;
  verified: boolean;
  repo_stars: number;
}

const RESULT_COLUMNS = sql`p.id, p.scope, p.name, p.description, p.kind, p.category, p.source_repo,
  p.token_count, p.verified, p.repo_stars`;

/**
 * One lexeme as a prefix anywhere: `simple` for names/scopes, `english` stems for descriptions. Most
 * words are their own stem, and `'data':* | 'data':*` checks every row that lacks it twice; the CASE
 * folds to one operand then (Postgres evaluates it once, when planning with the bound values).
 */
export function lexemeQuery(lexeme: string): RawBuilder<unknown> {
  const operand = prefixOperand(lexeme);
  const simple = sql`to_tsquery('simple', ${operand})`;
  const english = sql`to_tsquery('english', ${operand})`;
  return sql`(case when ${english} = ${simple} then ${simple} else ${simple} || ${english} end)`;
}

/** Every lexeme as a prefix, anywhere (AND). */
export function anywhereQuery(lexemes: string[]): RawBuilder<unknown> {
  return sql`(${sql.join(lexemes.map(lexemeQuery), sql` && `)})`;
}

/** Every lexeme as a prefix within the given weights (A = name, B = scope). */
function weightedQuery(lexemes: string[], weights: string): RawBuilder<unknown> {
  return sql`to_tsquery('simple', ${lexemes.map((lexeme) => prefixOperand(lexeme, weights)).join(' & ')})`;
}

/**
 * The three tsqueries of a re-check as one-row CTE `q` (anywhere, name+scope, name): computed once per
 * execution however the statement is planned. A generic plan cannot fold to_tsquery of a parameter
 * into a constant as a custom plan does, and would call it for every row tested.
 */
function recheckQueries(lexemes: string[]): RawBuilder<unknown> {
  return sql`q as materialized (select ${anywhereQuery(lexemes)} as anywhere,
    ${weightedQuery(lexemes, 'AB')} as ab, ${weightedQuery(lexemes, 'A')} as a)`;
}

/** tierOf with the queries of recheckQueries' `q`. */
function tierFrom(vector: RawBuilder<unknown>): RawBuilder<number> {
  return sql<number>`case when not ${vector} @@ q.ab then 2 when ${vector} @@ q.a then 0 else 1 end`;
}

/**
 * Distinct statement texts run as named statements (see runNamed); past this, new ones run unnamed. Each
 * costs Postgres ~360 KB per connection that ran it (7 of them: 2.5 MB of plan-cache contexts on one
 * connection, pg_backend_memory_contexts at 1M packages), so at most ~11.5 MB per connection.
 */
const MAX_NAMED_SEARCH_STATEMENTS = 32;
const namedSearchStatements = new Set<string>();

/**
 * Runs a search statement as a named (prepared) statement, one name per distinct text, so that each
 * connection plans it once: planning the posting plan's CTEs cost ~1.1 ms (parse 0.35 + bind 0.74)
 * beside ~2.6 ms of execution per statement, measured over 173 of them at 1M packages. The values a
 * custom plan would estimate by (row limits, block ranges, key lists, the prefixes) reach the statements
 * through sub-selects and the tsqueries through recheckQueries, so a custom plan costs what the generic
 * one does and Postgres keeps the generic one after five. Texts differ only by the query's shape (terms,
 * keys per term); at most MAX_NAMED_SEARCH_STATEMENTS are named per process. The derived tables' swap
 * invalidates the plans, and Postgres re-plans them.
 */
async function runNamed<R>(db: Db, query: RawBuilder<R>): Promise<R[]> {
  const compiled = query.compile(db);
  const name = `pkgreg_search_${createHash('sha1').update(compiled.sql).digest('hex').slice(0, 20)}`;
  if (namedSearchStatements.has(name) || namedSearchStatements.size < MAX_NAMED_SEARCH_STATEMENTS) {
    namedSearchStatements.add(name);
    return queryNamed<R & object>(db, name, compiled.sql, compiled.parameters);
  }
  return (await db.executeQuery<R>(compiled)).rows;
}

/**
 * decisions.md: name above scope above description: 0 = all terms in the name, 1 = name+scope, 2 = else.
 * Name+scope is tested first: most matches of a broad query are description matches, which then cost
 * one check instead of two (the two are ~0.7 µs of the ~1.5 µs a matching row costs a broad slice).
 */
function tierOf(vector: RawBuilder<unknown>, lexemes: string[]): RawBuilder<number> {
  return sql<number>`case when not ${vector} @@ ${weightedQuery(lexemes, 'AB')} then 2
    when ${vector} @@ ${weightedQuery(lexemes, 'A')} then 0 else 1 end`;
}

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
  /**
   * Every key has its positions in package_search_blocks, or holds none (false when `keys` is null).
   */
  blocked: boolean;
  /** `lexemes` is not empty and every one of them has its own positions in package_search_blocks. */
  lexemesBlocked: boolean;
  /**
   * package_search_prefixes holds the prefix. For one character, that also says the last rebuild stored
   * first-character name keys (both came in the same change, and a rebuild swaps every table at once).
   */
  counted: boolean;
}

/** The longest lexeme prefix pkgreg_search_keys stores (migration 2026-11-21T1400-search-keys). */
export const SEARCH_KEY_LENGTH = 4;

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
 * Per prefix, from package_search_lexemes (as of its last rebuild): how many documents it may reach,
 * which stored lexemes it expands to, and its prefix keys. The english stem is a prefix too
 * (descriptions are stemmed: `running` is stored as `run`). Sums over-count documents holding several
 * lexemes of one prefix (`data` and `database`); measured a few percent, fine for planning.
 * A prefix of 1 to SEARCH_KEY_LENGTH characters that is its own stem is one row of
 * package_search_prefixes; summing its lexemes instead (4,950 of them for "qu" in the 1M bench data)
 * took about half of "qu lo mo"'s 13 ms, and 5 of "code r"'s 12 ms for the one-character "r".
 */
export async function prefixStats(db: Db, prefixes: string[], maxExpansions: number): Promise<PrefixStats[]> {
  if (!Number.isInteger(maxExpansions) || maxExpansions < 0) throw new Error('maxExpansions: a whole number');
  // Planned once per connection, not per search: the code's constants are written into the text, and the
  // prefixes reach the plan through a sub-select, so no plan ever sees their values. A custom plan (for
  // the values at hand) then costs what the generic one does, and after its five custom plans Postgres
  // keeps the generic one: 0.55-1.2 ms of planning per search became 0.015 (docs/benchmarks.md).
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
  const query = sql<StatsRow>`
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
  const rows = await runNamed(db, query);
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

/** Rows in package_search_docs (the highest ord: an index probe, not a count). */
export async function countSearchDocs(db: Db): Promise<number> {
  const result = await sql<{ n: number | null }>`select max(ord) as n from package_search_docs`.execute(db);
  return Number(result.rows[0]?.n ?? 0);
}

/**
 * Selective plan: `indexQuery` (a tsquery over pkgreg_search_keys: each narrow term as an OR of the
 * exact stored lexemes its prefix expands to, each broad one as its prefix keys) lets the GIN index
 * intersect posting lists with its fast scan, where a prefix operand would make it read a whole prefix
 * range. The real query, the tier and the order are then computed over those few rows, so the answer is
 * exact, total included. `recheck: false` when every candidate is a match already (no prefix key, no
 * term left out): each narrow lexeme, and each key it reaches, starts with its term or its stem.
 */
export async function searchSelective(
  db: Db,
  lexemes: string[],
  indexQuery: string,
  limit: number,
  recheck = true,
): Promise<{ rows: SearchRow[]; total: number }> {
  const result = await sql<SearchRow & { total: number }>`
    with candidates as materialized (
      select ${RESULT_COLUMNS}, p.search_vector from packages p
      where pkgreg_search_keys(p.search_vector) @@ to_tsquery('simple', ${indexQuery}) and p.status <> 'delisted'
    )
    select p.id, p.scope, p.name, p.description, p.kind, p.category, p.source_repo, p.token_count, p.verified,
      p.repo_stars, count(*) over ()::int as total
    from candidates p
    ${recheck ? sql`where p.search_vector @@ ${anywhereQuery(lexemes)}` : sql``}
    order by ${tierOf(sql`p.search_vector`, lexemes)}, p.repo_stars desc, p.scope, p.name
    limit ${limit}`.execute(db);
  return { rows: result.rows, total: Number(result.rows[0]?.total ?? 0) };
}

export interface RankedMatch {
  ord: number;
  tier: number;
  /** The package's result fields; null when it was delisted since the search tables were rebuilt. */
  row: SearchRow | null;
}

/**
 * Broad plan, one slice of package_search_docs (positions from..to): the best `limit` matches by tier
 * then position, with their result fields read live from packages in the same statement (so a search
 * that one slice settles costs one round trip; a delisting since the rebuild is honoured), and how many
 * matches (and name matches) the slice holds; only those rows leave Postgres.
 */
export async function matchesInSlice(
  db: Db,
  lexemes: string[],
  from: number,
  to: number,
  limit: number,
  /**
   * initialsMask of the one-character terms (null: none): rows are first taken from
   * package_search_initials, whose bits say which first characters a row's lexemes have (~0.08 µs a
   * row against ~0.27 for testing the vector), and only the rows with every such bit are tested.
   */
  initials: bigint | null = null,
): Promise<{ top: RankedMatch[]; matches: number; nameMatches: number }> {
  const rows =
    initials === null
      ? sql`package_search_docs d where d.ord between ${from} and ${to}`
      : sql`package_search_initials i join package_search_docs d on d.ord = i.ord
        where i.ord between ${from} and ${to} and (i.initials & ${String(initials)}::int8) = ${String(initials)}::int8`;
  const result = await sql<
    Partial<SearchRow> & {
      ord: number;
      tier: number;
      visible: boolean;
      matches: number;
      name_matches: number;
    }
  >`
    select t.ord, t.tier, t.matches, t.name_matches, p.id is not null as visible, ${RESULT_COLUMNS}
    from (
      select m.ord, m.id, m.tier, count(*) over ()::int as matches,
        (count(*) filter (where m.tier = 0) over ())::int as name_matches
      from (
        select d.ord, d.id, ${tierOf(sql`d.search_vector`, lexemes)} as tier
        from ${rows} and d.search_vector @@ ${anywhereQuery(lexemes)}
      ) m
      order by m.tier, m.ord
      limit ${limit}
    ) t
    left join packages p on p.id = t.id and p.status <> 'delisted'
    order by t.tier, t.ord`.execute(db);
  const first = result.rows[0];
  return {
    // A visible row carries every SearchRow column (the left join matched).
    top: result.rows.map((r) => ({ ord: r.ord, tier: r.tier, row: r.visible ? (r as SearchRow) : null })),
    matches: first?.matches ?? 0,
    nameMatches: first?.name_matches ?? 0,
  };
}

/** Per query term, its keys into package_search_name_keys and package_search_blocks. */
export interface TermKeys {
  name: string[];
  /** The name keys hold exactly the packages whose name (or scope) holds the term, not a superset. */
  nameExact: boolean;
  block: string[];
  /** Packages its block keys reach, as the statistics count them (terms go rarest first). */
  postings: number;
}

/**
 * The ranking positions holding every term, from one of the posting tables (intarray's sorted int4[]
 * sets): per term the union of its keys' lists, then the intersection over the terms, in the order
 * given (rarest first). `where` narrows the table's rows (`s`) to a block; a key without a row adds
 * nothing. The intersection is a chain of laterals (`joins`, then read `value`): once it is empty the
 * later terms' lists are never read, and each operation copies and sort-checks its operands (~1 ms for
 * a list of 125k positions here), so a query whose name suffixes exclude each other stops early.
 */
function postings(
  table: 'package_search_name_keys' | 'package_search_blocks',
  column: 'ords' | 'a' | 'ab',
  terms: string[][],
  where: RawBuilder<unknown>,
  alias: string,
): { joins: RawBuilder<unknown>; value: RawBuilder<unknown> } {
  // Most name keys never occur in a scope: `a` as it is then, without a union's copy.
  const value =
    column === 'ab' ? sql`(case when s.b = '{}' then s.a else s.a | s.b end)` : sql.ref(`s.${column}`);
  const list = (key: string) =>
    sql`coalesce((select ${value} from ${sql.table(table)} s where s.key = ${key} ${where}), '{}')`;
  const union = (keys: string[]) =>
    keys.length === 0
      ? sql`'{}'::int4[]`
      : keys.length <= 4
        ? sql`(${sql.join(keys.map(list), sql` | `)})`
        : sql`coalesce((select pkgreg_int_union(${value}) from ${sql.table(table)} s where s.key = any((select ${keys}::text[])::text[]) ${where}), '{}')`;
  const step = (i: number) => sql.ref(`${alias}${i}.a`);
  const joins = terms.map((keys, i) =>
    i === 0
      ? sql`cross join lateral (select ${union(keys)} as a offset 0) ${sql.id(`${alias}${i}`)}`
      : sql`cross join lateral (select case when cardinality(${step(i - 1)}) = 0 then ${step(i - 1)}
          else ${step(i - 1)} & ${union(keys)} end as a offset 0) ${sql.id(`${alias}${i}`)}`,
  );
  return { joins: sql.join(joins, sql` `), value: step(terms.length - 1) };
}

export interface RankedChunk<S> {
  top: RankedMatch[];
  /** Matches among the candidates (re-checked), and those in ranking tier 0 and tier 2. */
  matches: number;
  tier0: number;
  tier2: number;
  scalars: S;
}

type ChunkRow<S> = Partial<SearchRow> &
  S & {
    ord: number | null;
    tier: number | null;
    visible: boolean;
    matches: number;
    tier0: number;
    tier2: number;
  };

/** Rows of a ranked statement (`ord`/`tier` null on its scalar-only row) as matches, fields when visible. */
function rankedMatches(
  rows: Array<Partial<SearchRow> & { ord: number | null; tier: number | null; visible: boolean }>,
): RankedMatch[] {
  return rows.flatMap((r) =>
    r.ord === null || r.tier === null
      ? []
      : [{ ord: r.ord, tier: r.tier, row: r.visible ? (r as SearchRow) : null }],
  );
}

/**
 * `ctes` (ending in the candidate positions `c(ord)`) re-checked against every term and ranked: the
 * best `limit` by tier then position with their result fields (read live from packages, so a delisting
 * since the rebuild is honoured), how many matches they hold, and the caller's `scalars` over the CTEs.
 * Always at least one row (`ord` null when nothing matched), so the scalars survive an empty chunk.
 */
async function rankCandidates<S extends object>(
  db: Db,
  lexemes: string[],
  ctes: RawBuilder<unknown>,
  scalars: RawBuilder<unknown>,
  limit: number,
): Promise<RankedChunk<S>> {
  const rows = await runNamed(
    db,
    sql<ChunkRow<S>>`
    with ${ctes}, ${recheckQueries(lexemes)},
    m as (
      select c.ord, d.id, ${tierFrom(sql`d.search_vector`)} as tier
      from c join package_search_docs d on d.ord = c.ord cross join q
      where d.search_vector @@ q.anywhere
    )
    select s.*, t.ord, t.tier, coalesce(t.matches, 0) as matches, coalesce(t.tier0, 0) as tier0,
      coalesce(t.tier2, 0) as tier2, p.id is not null as visible, ${RESULT_COLUMNS}
    from (select ${scalars}) s
    left join (
      select m.ord, m.id, m.tier, count(*) over ()::int as matches,
        (count(*) filter (where m.tier = 0) over ())::int as tier0,
        (count(*) filter (where m.tier = 2) over ())::int as tier2
      from m order by m.tier, m.ord limit (select ${limit}::int8)
    ) t on true
    left join packages p on p.id = t.id and p.status <> 'delisted'
    order by t.tier, t.ord`,
  );
  const first = rows[0];
  if (!first) throw new Error('rankCandidates: the scalar row is missing');
  return {
    top: rankedMatches(rows),
    matches: first.matches,
    tier0: first.tier0,
    tier2: first.tier2,
    scalars: first,
  };
}

/**
 * Name phase of the posting plan: the positions whose name + scope hold every term
 * (package_search_name_keys: a superset of ranking tiers 0 and 1, wherever they rank), and `count` of
 * them from the `from`-th (1-based, in ranking order) re-checked and ranked. `candidates`: how many
 * positions the intersection holds.
 */
export async function nameMatches(
  db: Db,
  lexemes: string[],
  terms: TermKeys[],
  from: number,
  count: number,
  limit: number,
): Promise<RankedChunk<{ candidates: number }>> {
  const names = postings(
    'package_search_name_keys',
    'ab',
    terms.map((t) => t.name),
    sql``,
    'p',
  );
  // `offset 0` keeps the intersection one value that both outputs read (no copy of a long list).
  return rankCandidates<{ candidates: number }>(
    db,
    lexemes,
    sql`n as materialized (
        select icount(x.ords) as candidates, subarray(x.ords, ${from}::int4, ${count}::int4) as chunk
        from (select ${names.value} as ords from (select 1) one ${names.joins} offset 0) x),
      c as materialized (select o.ord from n, unnest(n.chunk) o(ord))`,
    sql`(select n.candidates from n) as candidates`,
    limit,
  );
}

/**
 * Name phase of the posting plan when every term's name keys are exact: ranking tiers 0 (every term
 * in the name) and 1 (in name + scope) as set operations over package_search_name_keys, wherever they
 * rank, with no row read but the page's. `tier0`, `tier01`: how many packages each holds.
 */
export async function nameTiers(
  db: Db,
  terms: TermKeys[],
  limit: number,
): Promise<{ top: RankedMatch[]; tier0: number; tier01: number }> {
  const names = terms.map((t) => t.name);
  const inName = postings('package_search_name_keys', 'a', names, sql``, 'a');
  const inNameOrScope = postings('package_search_name_keys', 'ab', names, sql``, 'b');
  const rows = await runNamed(
    db,
    sql<
      Partial<SearchRow> & {
        tier0: number;
        tier01: number;
        ord: number | null;
        tier: number | null;
        visible: boolean;
      }
    >`
    with t0 as materialized (select ${inName.value} as t0 from (select 1) one ${inName.joins}),
    -- Tier 1 needs a term in a scope, and matters only while tier 0 is short of the page.
    x as materialized (
      select t0.t0, case
        when icount(t0.t0) < ${limit}::int4 and exists (select 1 from package_search_name_keys s
          where s.key = any((select ${names.flat()}::text[])::text[]) and s.b <> '{}')
        then (select ${inNameOrScope.value} from (select 1) one ${inNameOrScope.joins})
        else t0.t0 end as t01
      from t0),
    n as materialized (
      select icount(x.t0)::int as tier0, icount(x.t01)::int as tier01,
        subarray(x.t0, 1, ${limit}::int4) as top0, subarray(x.t01 - x.t0, 1, ${limit}::int4) as top1
      from x),
    c as (
      select o.ord, 0 as tier from n, unnest(n.top0) o(ord)
      union all select o.ord, 1 from n, unnest(n.top1) o(ord)),
    t as (
      select c.ord, c.tier, d.id from c join package_search_docs d on d.ord = c.ord
      order by c.tier, c.ord limit (select ${limit}::int8))
    select n.tier0, n.tier01, t.ord, t.tier, p.id is not null as visible, ${RESULT_COLUMNS}
    from n
    left join t on true
    left join packages p on p.id = t.id and p.status <> 'delisted'
    order by t.tier, t.ord`,
  );
  const first = rows[0];
  return {
    top: rankedMatches(rows),
    tier0: first?.tier0 ?? 0,
    // Not computed past a page of tier 0 (tier 1 cannot reach the page then): at least tier0.
    tier01: first?.tier01 ?? 0,
  };
}

/**
 * Block phase of the posting plan: blocks `firstBlock`..`lastBlock` of package_search_blocks, each
 * intersected over the terms, and the first `count` of their positions (after the first `offset` of
 * `firstBlock`) re-checked and ranked. `block_sizes`: each block's intersection size, in block order;
 * `checked`: the positions re-checked; `last_ord`: the last of them.
 */
export async function blockMatches(
  db: Db,
  lexemes: string[],
  terms: TermKeys[],
  firstBlock: number,
  lastBlock: number,
  offset: number,
  count: number,
  limit: number,
): Promise<RankedChunk<{ block_sizes: number[]; checked: number; last_ord: number | null }>> {
  const perBlock = postings(
    'package_search_blocks',
    'ords',
    terms.filter((t) => t.block.length > 0).map((t) => t.block),
    sql`and s.block = g.block`,
    'p',
  );
  return rankCandidates<{ block_sizes: number[]; checked: number; last_ord: number | null }>(
    db,
    lexemes,
    sql`b as materialized (
        select g.block, ${perBlock.value} as ords
        from generate_series((select ${firstBlock}::int4), (select ${lastBlock}::int4)) g(block) ${perBlock.joins}),
      c as materialized (
        select o.ord from b,
          unnest(subarray(b.ords, case when b.block = ${firstBlock}::int4 then ${offset}::int4 + 1 else 1 end,
            ${count}::int4)) o(ord)
        order by o.ord limit (select ${count}::int8))`,
    sql`(select array_agg(icount(b.ords) order by b.block) from b) as block_sizes,
      (select count(*) from c)::int as checked, (select max(c.ord) from c) as last_ord`,
    limit,
  );
}

/** Positions per block of package_search_blocks (2^16 = 65,536); tests use smaller blocks. */
export const SEARCH_BLOCK_SHIFT = 16;
/** Keys in fewer packages than this have no blocks: a term that rare is answered from the GIN index. */
export const SEARCH_BLOCK_MIN_DOCS = 3000;

export interface SearchTablesOptions {
  blockShift: number;
  blockMinDocs: number;
}

/**
 * Rebuilds package_search_docs, its lexeme and prefix statistics and its posting tables (blocks and
 * name keys) aside and swaps them in: readers keep the old tables until the swap, which holds its lock
 * only for the drops and renames.
 */
export async function rebuildSearchTables(
  db: Db,
  { blockShift, blockMinDocs }: SearchTablesOptions = {
    blockShift: SEARCH_BLOCK_SHIFT,
    blockMinDocs: SEARCH_BLOCK_MIN_DOCS,
  },
): Promise<void> {
  const tables = [
    'package_search_docs',
    'package_search_lexemes',
    'package_search_prefixes',
    'package_search_blocks',
    'package_search_name_keys',
    'package_search_initials',
  ];
  for (const table of tables) await sql`drop table if exists ${sql.table(`${table}_next`)}`.execute(db);
  await sql`
    create table package_search_docs_next as
    select (row_number() over (order by repo_stars desc, scope, name))::int as ord, id, search_vector
    from packages where status <> 'delisted' order by repo_stars desc, scope, name`.execute(db);
  await sql`alter table package_search_docs_next add constraint package_search_docs_next_pkey primary key (ord)`.execute(
    db,
  );
  // The first characters of each row's lexemes (migration 2026-11-25T0300-search-initials).
  await sql`
    create table package_search_initials_next as
    select ord, pkgreg_search_initials(search_vector) as initials from package_search_docs_next order by ord`.execute(
    db,
  );
  await sql`alter table package_search_initials_next
    add constraint package_search_initials_next_pkey primary key (ord)`.execute(db);
  await sql`
    create table package_search_lexemes_next as
    select word as lexeme, ndoc from ts_stat('select search_vector from packages where status <> ''delisted''')`.execute(
    db,
  );
  await sql`alter table package_search_lexemes_next
    add constraint package_search_lexemes_next_pkey primary key (lexeme)`.execute(db);
  await sql`
    create table package_search_prefixes_next as
    select left(lexeme, n) as prefix, sum(ndoc)::bigint as docs, count(*)::int as lexemes
    from package_search_lexemes_next, generate_series(1, ${sql.lit(SEARCH_KEY_LENGTH)}) n
    where length(lexeme) >= n
    group by 1`.execute(db);
  await sql`alter table package_search_prefixes_next
    add constraint package_search_prefixes_next_pkey primary key (prefix)`.execute(db);
  // The keys a lexeme gives (pkgreg_search_keys): itself, and its first 2 to SEARCH_KEY_LENGTH characters.
  const keysOf = (lexeme: RawBuilder<unknown>) => sql`(
    select ${lexeme} union select left(${lexeme}, n) from generate_series(2, ${sql.lit(SEARCH_KEY_LENGTH)}) n
    where length(${lexeme}) > n)`;
  // Blocks hold the keys the planner looks up (prefix keys, and whole lexemes for narrow terms) that the
  // statistics put in at least blockMinDocs packages (prefix sums over-count a little, so a few rarer
  // prefixes get blocks too).
  await sql`
    create table package_search_blocks_next as
    select k.key, (d.ord >> ${sql.lit(blockShift)})::int4 as block, uniq(sort(array_agg(d.ord))) as ords
    from package_search_docs_next d
    cross join lateral unnest(tsvector_to_array(d.search_vector)) l(lexeme)
    cross join lateral ${keysOf(sql`l.lexeme`)} k(key)
    where k.key in (
        select prefix from package_search_prefixes_next where length(prefix) >= 2 and docs >= ${sql.lit(blockMinDocs)})
      or k.key in (select lexeme from package_search_lexemes_next where ndoc >= ${sql.lit(blockMinDocs)})
    group by 1, 2`.execute(db);
  await sql`alter table package_search_blocks_next
    add constraint package_search_blocks_next_pkey primary key (key, block)`.execute(db);
  // Name keys: every key of the name (weight A) and scope (weight B) lexemes, however rare, and their
  // first character too (a one-character term, "code r", has no other key: its name positions come
  // from here, and the blocks leave it to the re-check).
  await sql`
    create table package_search_name_keys_next as
    select k.key,
      uniq(sort(coalesce(array_agg(d.ord) filter (where 'A' = any(l.weights)), '{}'))) as a,
      uniq(sort(coalesce(array_agg(d.ord) filter (where 'B' = any(l.weights)), '{}'))) as b
    from package_search_docs_next d
    cross join lateral unnest(ts_filter(d.search_vector, '{a,b}')) l
    cross join lateral (select key from ${keysOf(sql`l.lexeme`)} x(key) union select left(l.lexeme, 1)) k(key)
    group by 1`.execute(db);
  await sql`alter table package_search_name_keys_next
    add constraint package_search_name_keys_next_pkey primary key (key)`.execute(db);
  await db.transaction().execute(async (trx) => {
    for (const table of tables) {
      await sql`drop table ${sql.table(table)}`.execute(trx);
      await sql`alter table ${sql.table(`${table}_next`)} rename to ${sql.table(table)}`.execute(trx);
      await sql`alter index ${sql.table(`${table}_next_pkey`)} rename to ${sql.table(`${table}_pkey`)}`.execute(
        trx,
      );
    }
  });
}
