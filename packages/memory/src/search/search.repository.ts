import type { MemoryTier } from '@pkgreg/contracts';
import { type RawBuilder, sql } from 'kysely';
import type { DbOrTx } from '../db.js';
import { ENTRY_COLUMNS, type MemoryEntryRow } from '../entries/entries.repository.js';

// The statements of memory search (search.service.ts says how they are combined). Each term is scored
// per entry as 2 (a prefix of an English-stemmed content word), 1 (a prefix of a tag word only) or 0;
// `num` is their sum and `den` twice the number of terms, so text = num / den. English stop words yield
// no lexeme and are no terms (den counts only the others); the terms are letters and digits only
// (extractSearchTerms), so the quoted to_tsquery input can never be malformed.
//
// `rank` = text + recencyWeight * recency is the ordering every statement and the service share
// (search-settings.ts normalizes the weights for callers; normalizing does not change the order).

export interface Scope {
  namespace: string;
  tiers: MemoryTier[];
  /** Entries must carry all of these. */
  tags: string[];
}

export interface RankParams {
  terms: string[];
  halfLifeSeconds: number;
  recencyWeight: number;
  /** The instant recency is measured from (Postgres text form); null: the statement's now(). */
  now: string | null;
}

/** A scored match: what ranking needs, not the entry's columns. */
export interface Candidate {
  entry_id: string;
  /** created_at in microseconds since the epoch (ties break by created_at, then seq, newest first). */
  at_us: number;
  seq: number;
  num: number;
  recency: number;
  rank: number;
  /** The entry's columns, when the statement was asked for them (`withRows`). */
  row?: MemoryEntryRow;
}

/** How many of the best candidates a statement returns, and whether with their entries' columns. */
export interface Best {
  limit: number;
  withRows: boolean;
}

export interface WindowSummary {
  /** Rows the window read (fewer than its size: it holds every active entry of the searched tiers). */
  rows: number;
  /** The oldest window row: older entries are those before it in (created_at, seq) order. */
  cutAt: string | null;
  cutSeq: number | null;
  cutRecency: number | null;
  /** Seconds between the window's newest and oldest rows. */
  spanSeconds: number;
  now: string;
  /** Which terms are terms (not English stop words). */
  effective: boolean[];
  /** Window entries matching (and carrying the tags). */
  matches: number;
  /** Per term: window matches holding it (content or tag). */
  termMatches: number[];
  /** Window matches by the set of terms they hold (bit i: term i). */
  maskCounts: { mask: number; count: number }[];
}

const ident = (name: string) => sql.raw(name);

/** One row `q`: per term its content query `e<i>`, tag query `s<i>` (null for a stop word), and `den`. */
function termQueries(terms: string[]): RawBuilder<unknown> {
  const en = terms.map(
    (t, i) => sql`to_tsquery('english', quote_literal(${t}::text) || ':*A') as ${ident(`e${i}`)}`,
  );
  const si = terms.map(
    (t, i) =>
      sql`case when numnode(x.${ident(`e${i}`)}) > 0
        then to_tsquery('simple', quote_literal(${t}::text) || ':*B') end as ${ident(`s${i}`)}`,
  );
  const den = sql.join(
    terms.map((_, i) => sql`(numnode(x.${ident(`e${i}`)}) > 0)::int`),
    sql` + `,
  );
  return sql`q as (select x.*, ${sql.join(si)}, 2 * (${den}) as den from (select ${sql.join(en)}) x)`;
}

/**
 * The per-term scores of the vector `v` as columns f<i>, one row per input row: the caller fences the
 * subquery (offset 0) so each is evaluated once however often the outer query uses it.
 */
function scoreColumns(terms: string[], v: RawBuilder<unknown>) {
  return sql.join(
    terms.map(
      (_, i) =>
        sql`case when ${v} @@ q.${ident(`e${i}`)} then 2 when ${v} @@ q.${ident(`s${i}`)} then 1 else 0 end
          as ${ident(`f${i}`)}`,
    ),
  );
}

/** num (the sum of the term scores) and mask (bit i: term i matched) of a fenced row `x`. */
function numOf(terms: string[]): RawBuilder<number> {
  return sql<number>`(${sql.join(
    terms.map((_, i) => sql`x.${ident(`f${i}`)}`),
    sql` + `,
  )})`;
}

function maskOf(terms: string[]): RawBuilder<number> {
  return sql<number>`(${sql.join(
    terms.map((_, i) => sql`((x.${ident(`f${i}`)} > 0)::int::int8 << ${sql.lit(i)})`),
    sql` | `,
  )})`;
}

/** 2^(-age / half-life), at most 1 (an entry "from the future", clock skew, counts as new). */
function recencyOf(
  p: Pick<RankParams, 'halfLifeSeconds'>,
  createdAt: RawBuilder<unknown>,
): RawBuilder<number> {
  // date_part is float8; extract is numeric since Postgres 14, several times slower per row.
  return sql<number>`least(1::float8, power(0.5::float8,
    date_part('epoch', clock.now - ${createdAt}) / ${p.halfLifeSeconds}::float8))`;
}

function tierFilter(alias: string, tiers: MemoryTier[]): RawBuilder<unknown> {
  // Both tiers are every entry: no filter. One tier: an equality the planner can use.
  return tiers.length === 1 ? sql`and ${sql.ref(`${alias}.tier`)} = ${tiers[0]}` : sql``;
}

function tagFilter(alias: string, tags: string[]): RawBuilder<unknown> {
  return tags.length > 0 ? sql`and ${sql.ref(`${alias}.tags`)} @> ${tags}::text[]` : sql``;
}

const clockCte = (p: RankParams) => sql`clock as (select coalesce(${p.now}::timestamptz, now()) as now)`;

const candidateColumns = sql`
  m.entry_id, (extract(epoch from m.created_at) * 1000000)::int8 as at_us, m.seq, m.num, m.recency, m.rank`;

/** The best candidates of `m` (a lateral subquery `t`), with their entries' columns when asked. */
function bestOf(best: Best): RawBuilder<unknown> {
  const top = sql`(select ${candidateColumns} from m
    order by m.rank desc, m.created_at desc, m.seq desc limit ${best.limit}) t`;
  if (!best.withRows) return sql`lateral ${top} on true`;
  const columns = sql.join(ENTRY_COLUMNS.map((c) => sql`${sql.ref(`e.${c}`)} as ${sql.raw(`e_${c}`)}`));
  return sql`lateral (select t.*, ${columns} from ${top} join memory_entries e on e.entry_id = t.entry_id) t on true`;
}

/**
 * `m`: the matches (num > 0) among the scored rows `x` that pass `keep`, with num, mask, recency
 * (computed for matches only) and rank.
 */
function matchesOf(p: RankParams, keep: RawBuilder<unknown> = sql`true`): RawBuilder<unknown> {
  const num = numOf(p.terms);
  return sql`m as (
      select y.*, y.num::float8 / q.den::float8 + ${p.recencyWeight}::float8 * y.recency as rank
      from (
        select x.entry_id, x.created_at, x.seq, ${num} as num, ${maskOf(p.terms)} as mask,
          ${recencyOf(p, sql`x.created_at`)} as recency
        from x cross join clock where ${num} > 0 and ${keep}
        offset 0) y cross join q
    )`;
}

/**
 * The window: the newest `windowSize` active entries of the scope's tiers, newest first (one backward
 * scan of memory_entries_recent_idx), each scored. Returns the window's summary and its best matches by
 * rank.
 */
export async function windowCandidates(
  db: DbOrTx,
  scope: Scope,
  p: RankParams,
  windowSize: number,
  best: Best,
): Promise<{ summary: WindowSummary; candidates: Candidate[] }> {
  const { terms } = p;
  const anyTerm = sql.join(
    terms.map((_, i) => sql`numnode(${ident(`e${i}`)}) > 0`),
    sql` or `,
  );
  const effective = sql`array[${sql.join(terms.map((_, i) => sql`numnode(q.${ident(`e${i}`)}) > 0`))}]::bool[]`;
  // Window rows without the tags still count in the window (its size and cut); they only cannot match.
  const tagged = scope.tags.length > 0 ? sql`w.tags @> ${scope.tags}::text[]` : sql`true`;
  const termMatches = sql`array[${sql.join(
    terms.map((_, i) => sql`count(*) filter (where m.mask & ${sql.lit(2 ** i)}::int8 <> 0)`),
  )}]::int[]`;
  const { rows } = await sql<
    CandidateRow & {
      window_rows: number;
      cut_at: string | null;
      cut_seq: number | null;
      cut_recency: number | null;
      span_seconds: number | null;
      now: string;
      effective: boolean[];
      matches: number;
      term_matches: number[];
      mask_counts: [number, number][] | null;
    }
  >`
    with ${termQueries(terms)}, ${clockCte(p)},
    x as (
      select w.entry_id, w.created_at, w.seq, ${tagged} as tagged, ${scoreColumns(terms, sql`w.search_vector`)}
      from (
        select e.entry_id, e.created_at, e.seq, e.tags, e.search_vector
        from memory_entries e
        where e.namespace = ${scope.namespace} and e.status = 'active' ${tierFilter('e', scope.tiers)}
          -- A query of stop words only reads nothing (a one-time filter).
          and (select ${anyTerm} from q)
        order by e.created_at desc, e.seq desc
        limit ${windowSize}
      ) w cross join q
      offset 0
    ),
    ${matchesOf(p, sql`x.tagged`)},
    cut as (select created_at, seq from x order by created_at, seq limit 1),
    summary as (
      select (select count(*) from x)::int as window_rows,
        (select created_at::text from cut) as cut_at, (select seq from cut) as cut_seq,
        (select ${recencyOf(p, sql`cut.created_at`)} from cut, clock) as cut_recency,
        (select date_part('epoch', max(x.created_at) - min(x.created_at)) from x) as span_seconds,
        (select now::text from clock) as now, (select ${effective} from q) as effective,
        count(*)::int as matches, ${termMatches} as term_matches,
        (select json_agg(json_build_array(g.mask, g.n)) from (select mask, count(*) as n from m group by mask) g)
          as mask_counts
      from m
    )
    select summary.*, t.* from summary left join ${bestOf(best)}`.execute(db);
  const first = rows[0];
  if (!first) throw new Error('the window statement returns one row at least');
  const summary: WindowSummary = {
    rows: first.window_rows,
    cutAt: first.cut_at,
    cutSeq: first.cut_seq,
    cutRecency: first.cut_recency,
    spanSeconds: first.span_seconds ?? 0,
    now: first.now,
    effective: first.effective ?? terms.map(() => false),
    matches: first.matches,
    termMatches: first.term_matches,
    maskCounts: (first.mask_counts ?? []).map(([mask, count]) => ({ mask, count })),
  };
  return { summary, candidates: candidatesOf(rows) };
}

/** Rank desc, then newest first: the order every statement here sorts by. */
export function compareCandidates(a: Candidate, b: Candidate): number {
  return b.rank - a.rank || b.at_us - a.at_us || b.seq - a.seq;
}

/** The candidates of a statement's rows, best first (a join with the entries loses the order). */
function candidatesOf(rows: CandidateRow[]): Candidate[] {
  return rows
    .filter((r) => r.entry_id !== null)
    .map(toCandidate)
    .sort(compareCandidates);
}

type CandidateRow = Omit<Candidate, 'row'> & { [K in keyof MemoryEntryRow as `e_${K}`]?: MemoryEntryRow[K] };

function toCandidate(r: CandidateRow): Candidate {
  const candidate: Candidate = {
    entry_id: r.entry_id,
    at_us: Number(r.at_us),
    seq: Number(r.seq),
    num: r.num,
    recency: r.recency,
    rank: r.rank,
  };
  if (r.e_entry_id !== undefined) {
    candidate.row = Object.fromEntries(
      ENTRY_COLUMNS.map((c) => [c, r[`e_${c}`]]),
    ) as unknown as MemoryEntryRow;
  }
  return candidate;
}

/** A slice of time older than the window: before `before` (created_at, seq), back `seconds` or to the start. */
export interface Slice {
  before: { at: string; seq: number };
  /** Null: every older entry. */
  seconds: number | null;
}

/**
 * Matches in `slice` that satisfy `clauses` (an OR of ANDs of term indexes: an entry holding every term
 * of one clause), through the GIN index on pkgreg_memory_search_keys: it decodes only this namespace's
 * postings of those terms; a bounded slice is intersected with memory_entries_recent_idx's range first,
 * so only its rows are read. Reads at most `limit + 1` of them; `hits` says how many it read (more than
 * `limit`: not all were read), `matches` how many of those match (a key is a superset), `start` where
 * the slice starts (and its recency); returns the best of them by rank.
 */
export async function olderCandidates(
  db: DbOrTx,
  scope: Scope,
  p: RankParams & { now: string },
  slice: Slice,
  clauses: number[][],
  limit: number,
  best: Best,
): Promise<{
  hits: number;
  matches: number;
  start: { at: string; recency: number } | null;
  candidates: Candidate[];
}> {
  const { terms } = p;
  // A term's keys: the namespace's 8 hex characters, `c` + its English lexemes (content) or `t` + its
  // simple lexemes (tags); a term with several lexemes needs all of them (a superset of its match).
  const quoted = (s: RawBuilder<unknown>) =>
    sql`'''' || replace(replace(${s}, '\\', '\\\\'), '''', '''''') || ''':*'`;
  const keysOf = (config: 'english' | 'simple', field: 'c' | 't', term: string) => sql`
    '(' || (select string_agg(${quoted(sql`h.p || ${field}::text || left(l, 100)`)}, ' & ')
     from unnest(tsvector_to_array(to_tsvector(${config}::regconfig, ${term}::text))) l) || ')'`;
  // A term in content or tags; concat_ws skips a null (a term without lexemes in one configuration).
  const termKeys = (i: number) => {
    const term = terms[i] as string;
    return sql`'(' || concat_ws(' | ', ${keysOf('english', 'c', term)}, ${keysOf('simple', 't', term)}) || ')'`;
  };
  const formula = sql.join(
    clauses.map((clause) => sql`'(' || ${sql.join(clause.map(termKeys), sql` || ' & ' || `)} || ')'`),
    sql` || ' | ' || `,
  );
  const before = sql`(${slice.before.at}::timestamptz, ${slice.before.seq}::int8)`;
  const start =
    slice.seconds === null
      ? null
      : sql`(${slice.before.at}::timestamptz - make_interval(secs => ${slice.seconds}::float8))`;
  // A bounded slice: the namespace and time range from the btree, AND-ed with the keys. The rest of the
  // namespace: not indexable on purpose, since a bitmap of the whole namespace from the btree (planned
  // when the keys' estimate is high) cost more than the keys alone.
  const range =
    start === null
      ? sql`e.namespace || '' = ${scope.namespace}`
      : sql`e.namespace = ${scope.namespace} and e.created_at >= ${start}`;
  const { rows } = await sql<
    CandidateRow & { hits: number; matches: number; start_at: string | null; start_recency: number | null }
  >`
    with ${termQueries(terms)}, ${clockCte(p)},
    h as (select left(md5(${scope.namespace}::text), 8) as p),
    k as (select (${formula})::tsquery as k from h),
    x as (
      select e.entry_id, e.created_at, e.seq, ${scoreColumns(terms, sql`e.search_vector`)}
      from memory_entries e cross join q
      where pkgreg_memory_search_keys(e.namespace, e.search_vector) @@ (select k from k)
        and ${range}
        and e.status = 'active' ${tierFilter('e', scope.tiers)} ${tagFilter('e', scope.tags)}
        and (e.created_at, e.seq) < ${before}
      limit ${limit + 1}
    ),
    ${matchesOf(p)}
    select (select count(*) from x)::int as hits, (select count(*) from m)::int as matches,
      ${start === null ? sql`null::text` : sql`${start}::text`} as start_at,
      ${start === null ? sql`null::float8` : sql`(select ${recencyOf(p, start)} from clock)`} as start_recency,
      t.* from (select 1) one left join ${bestOf(best)}`.execute(db);
  const first = rows[0];
  return {
    hits: first?.hits ?? 0,
    matches: first?.matches ?? 0,
    start:
      first?.start_at != null && first.start_recency != null
        ? { at: first.start_at, recency: first.start_recency }
        : null,
    candidates: candidatesOf(rows),
  };
}

/**
 * A blank query: the newest `limit` active entries (one index-ordered scan per tier, memory_entries_order_idx),
 * with their recency, and how many there are, counted up to `countLimit`.
 */
export async function recentRows(
  db: DbOrTx,
  scope: Scope,
  p: Omit<RankParams, 'terms'>,
  limit: number,
  countLimit: number,
): Promise<{ rows: (MemoryEntryRow & { recency: number })[]; total: number }> {
  const tagFilterE = tagFilter('e', scope.tags);
  const columns = sql.join(ENTRY_COLUMNS.map((c) => sql.ref(`e.${c}`)));
  const perTier = scope.tiers.map(
    (tier) => sql`(select ${columns}, e.seq from memory_entries e
      where e.namespace = ${scope.namespace} and e.tier = ${tier} and e.status = 'active' ${tagFilterE}
      order by e.created_at desc, e.seq desc limit ${limit})`,
  );
  const rank = { ...p, terms: [] };
  const { rows } = await sql<MemoryEntryRow & { recency: number }>`
    with ${clockCte(rank)}
    select r.*, ${recencyOf(rank, sql`r.created_at`)} as recency
    from (${sql.join(perTier, sql` union all `)}) r, clock
    order by r.created_at desc, r.seq desc
    limit ${limit}`.execute(db);
  const counted = await sql<{ total: number }>`
    select count(*)::int as total from (
      select 1 from memory_entries e
      where e.namespace = ${scope.namespace} and e.status = 'active' ${tierFilter('e', scope.tiers)} ${tagFilterE}
      limit ${countLimit}) c`.execute(db);
  return { rows, total: counted.rows[0]?.total ?? 0 };
}

/** The entries of `ids` still active, in no particular order. */
export async function activeRowsByIds(
  db: DbOrTx,
  namespace: string,
  ids: string[],
): Promise<MemoryEntryRow[]> {
  if (ids.length === 0) return [];
  return db
    .selectFrom('memory_entries')
    .select(ENTRY_COLUMNS)
    .where('entry_id', 'in', ids)
    .where('namespace', '=', namespace)
    .where('status', '=', 'active')
    .execute();
}
