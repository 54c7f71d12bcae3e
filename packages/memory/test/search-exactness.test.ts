import type { MemoryTier } from '@pkgreg/contracts';
import { useTestDatabase } from '@pkgreg/db/vitest';
import { sql } from 'kysely';
import { beforeAll, describe, expect, it } from 'vitest';
import { extractSearchTerms, searchEntries, searchSettings } from '../src/index.js';
import { findCandidates } from '../src/search/search.service.js';
import type { SearchSettings } from '../src/search/search-settings.js';
import { ns } from './helpers.js';

// Exactness of bounded memory search (docs/decisions.md, Memory search): wherever a search says
// `ranking.exact`, its results must be the top k of scoring EVERY match; where it does not, they must be
// the top k of the window's matches. Checked on random queries against a brute-force ranking of every
// active entry, at window and limit sizes small enough for every path (window, bound, index, bounded).

const t = useTestDatabase();
const namespace = ns('exactness');
const small = ns('exactness-small');
const NOW = new Date('2026-11-25T12:00:00Z');
const DAY = 86_400_000;

let seed = 7;
const rand = () => {
  seed = (seed * 1103515245 + 12345) % 2 ** 31;
  return seed / 2 ** 31;
};
const pick = <T>(items: readonly T[]): T => items[Math.floor(rand() * items.length)] as T;

// Zipf-like: the first words are in most entries, the last in a few.
const VOCAB = [
  'alpha',
  'bravo',
  'charlie',
  'delta',
  'echo',
  'foxtrot',
  'golf',
  'hotel',
  'india',
  'juliet',
  'kilo',
  'lima',
  'mike',
  'november',
  'oscar',
  'papa',
  'quebec',
  'romeo',
  'sierra',
  'tango',
  'uniform',
  'victor',
  'whiskey',
  'xray',
  'yankee',
  'zulu',
  'amber',
  'basalt',
  'cobalt',
  'dolomite',
  'emerald',
  'feldspar',
];
const TAGS = ['ops', 'prefs', 'people', 'plans', 'alphatag', 'misc'];
const word = () => VOCAB[Math.floor(rand() ** 2.2 * VOCAB.length)] as string;

interface Row {
  namespace: string;
  tier: MemoryTier;
  content: string;
  tags: string[];
  created_at: Date;
  status: 'active' | 'superseded' | 'deleted';
}

function randomRow(target: string, at: Date): Row {
  const words = Array.from({ length: 2 + Math.floor(rand() * 6) }, word);
  const tags = TAGS.filter(() => rand() < 0.15);
  const r = rand();
  return {
    namespace: target,
    tier: rand() < 0.5 ? 'stm' : 'ltm',
    content: words.join(' '),
    tags,
    created_at: at,
    status: r < 0.05 ? 'deleted' : r < 0.1 ? 'superseded' : 'active',
  };
}

beforeAll(async () => {
  const rows: Row[] = [];
  // Insertion order (seq) is not creation order: created_at is random, with a block of ties.
  const tied = new Date(NOW.getTime() - 3 * DAY);
  for (let i = 0; i < 400; i++) {
    const at = i % 13 === 0 ? tied : new Date(NOW.getTime() - Math.floor(rand() * 200 * 24) * 3_600_000);
    rows.push(randomRow(namespace, at));
  }
  for (let i = 0; i < 15; i++) rows.push(randomRow(small, new Date(NOW.getTime() - i * DAY)));
  // One entry "from the future" (clock skew): its recency is capped at 1.
  rows.push({ ...randomRow(namespace, new Date(NOW.getTime() + DAY)), status: 'active' });
  await t.db
    .insertInto('memory_entries')
    .values(rows.map((r) => ({ ...r, metadata: '{}', updated_at: r.created_at })))
    .execute();
  await sql`analyze memory_entries`.execute(t.db);
});

interface Ranked {
  entry_id: string;
  rank: number;
  num: number;
}

/** Every active match of the scope scored and sorted: the definition exactness is checked against. */
async function rankEveryMatch(
  target: string,
  query: string,
  scope: { tiers: MemoryTier[]; tags: string[] },
  settings: SearchSettings,
  window?: number,
): Promise<Ranked[]> {
  const terms = extractSearchTerms(query);
  const score = sql.join(
    terms.map(
      (
        term,
      ) => sql`case when search_vector @@ to_tsquery('english', quote_literal(${term}::text) || ':*A') then 2
        when numnode(to_tsquery('english', quote_literal(${term}::text))) > 0
          and search_vector @@ to_tsquery('simple', quote_literal(${term}::text) || ':*B') then 1 else 0 end`,
    ),
    sql` + `,
  );
  const den = sql.join(
    terms.map((term) => sql`(numnode(to_tsquery('english', quote_literal(${term}::text))) > 0)::int`),
    sql` + `,
  );
  const recency = sql`least(1::float8, power(0.5::float8,
    date_part('epoch', ${NOW.toISOString()}::timestamptz - created_at) / ${settings.halfLifeDays * 86_400}::float8))`;
  const { rows } = await sql<Ranked>`
    with scoped as (
      select * from memory_entries
      where namespace = ${target} and status = 'active' and tier = any(${scope.tiers}::text[])
      order by created_at desc, seq desc
      ${window === undefined ? sql`` : sql`limit ${window}`}
    ), scored as (
      select entry_id, created_at, seq, (${score}) as num, 2 * (${den}) as den, ${recency} as recency
      from scoped where tags @> ${scope.tags}::text[]
    )
    select entry_id, num, num::float8 / den::float8 + ${settings.recencyWeight}::float8 * recency as rank
    from scored where num > 0
    order by rank desc, created_at desc, seq desc`.execute(t.db);
  return rows;
}

const VARIANTS = [
  { windowSize: 25, olderLimit: 10, olderMaxDensity: 0.05 },
  { windowSize: 60, olderLimit: 40, olderMaxDensity: 0.2 },
  { windowSize: 40, olderLimit: 400, olderMaxDensity: 1 },
  { windowSize: 25, olderLimit: 1000, olderMaxDensity: 0.01 },
];

function randomQuery(): string {
  const terms = Array.from({ length: 1 + Math.floor(rand() * 3) }, () => {
    const r = rand();
    const w = r < 0.15 ? pick(TAGS) : word();
    // Prefixes of 2 and 3 characters, as an agent types them.
    return r > 0.7 ? w.slice(0, 2 + Math.floor(rand() * 2)) : w;
  });
  return terms.join(' ');
}

describe('memory search exactness (docs/decisions.md: Memory search)', () => {
  it('exact results equal ranking every match; bounded ones equal the top of the window', async () => {
    const seen = { window: 0, bound: 0, index: 0, bounded: 0 };
    for (let i = 0; i < 400; i++) {
      const query = randomQuery();
      const variant = pick(VARIANTS);
      const settings = searchSettings({ ...variant, recencyWeight: pick([0.4, 0.1, 2]) });
      const topK = pick([1, 3, 10]);
      const tiers = pick<MemoryTier[]>([['stm', 'ltm'], ['stm'], ['ltm']]);
      const tags = rand() < 0.15 ? [pick(TAGS)] : [];
      const target = rand() < 0.1 ? small : namespace;
      const context = JSON.stringify({ i, query, variant, topK, tiers, tags, small: target === small });

      const result = await searchEntries(t.db, target, { query, tiers, tags, topK }, { settings, now: NOW });
      const every = await rankEveryMatch(target, query, { tiers, tags }, settings);
      const expected = result.ranking?.exact
        ? every
        : await rankEveryMatch(target, query, { tiers, tags }, settings, settings.windowSize);
      const top = expected.slice(0, topK);
      expect(
        result.results.map((r) => r.entry.entryId),
        context,
      ).toEqual(top.map((r) => r.entry_id));
      const sum = 1 + settings.recencyWeight;
      expect(
        result.results.map((r) => r.score),
        context,
      ).toEqual(top.map((r) => r.rank / sum));
      if (result.ranking?.totalExact) expect(result.total, context).toBe(every.length);
      else expect(result.total, context).toBeLessThanOrEqual(every.length);

      const terms = extractSearchTerms(query);
      const found = await findCandidates(
        t.db,
        { namespace: target, tiers, tags },
        {
          terms,
          halfLifeSeconds: settings.halfLifeDays * 86_400,
          recencyWeight: settings.recencyWeight,
          now: NOW.toISOString(),
        },
        settings,
        { limit: topK, withRows: false },
      );
      if (found) seen[found.via]++;
    }
    // Every path was taken, so each claim above was checked.
    for (const [via, count] of Object.entries(seen)) expect(count, `${via} taken`).toBeGreaterThan(0);
  }, 120_000);

  it('a term in nearly every entry is exact from the window alone (bound), at any window size', async () => {
    // 'al' prefixes 'alpha', the commonest word, and the tag 'alphatag'.
    const settings = searchSettings({ windowSize: 25, olderLimit: 10, olderMaxDensity: 0 });
    for (const query of ['al', 'alpha']) {
      const terms = extractSearchTerms(query);
      const found = await findCandidates(
        t.db,
        { namespace, tiers: ['stm', 'ltm'], tags: [] },
        { terms, halfLifeSeconds: 30 * 86_400, recencyWeight: 0.4, now: NOW.toISOString() },
        settings,
        { limit: 10, withRows: false },
      );
      expect(found?.via, query).toBe('bound');
      const result = await searchEntries(
        t.db,
        namespace,
        { query, tiers: ['stm', 'ltm'], topK: 10 },
        { settings, now: NOW },
      );
      expect(result.ranking?.exact).toBe(true);
      const every = await rankEveryMatch(namespace, query, { tiers: ['stm', 'ltm'], tags: [] }, settings);
      expect(result.results.map((r) => r.entry.entryId)).toEqual(every.slice(0, 10).map((r) => r.entry_id));
    }
  });

  it('a rare word is exact through the index phase: newest slices first, stopping once the rest cannot win', async () => {
    const settings = searchSettings({ windowSize: 25, olderLimit: 100, olderMaxDensity: 0.5 });
    const every = await rankEveryMatch(namespace, 'feldspar', { tiers: ['stm', 'ltm'], tags: [] }, settings);
    expect(every.length).toBeGreaterThan(10);
    const search = (topK: number) =>
      searchEntries(
        t.db,
        namespace,
        { query: 'feldspar', tiers: ['stm', 'ltm'], topK },
        { settings, now: NOW },
      );
    // Fewer matches than topK: every slice is read, so total counts every match.
    const all = await search(50);
    expect(all.ranking).toMatchObject({ exact: true, totalExact: true });
    expect(all.total).toBe(every.length);
    expect(all.results.map((r) => r.entry.entryId)).toEqual(every.map((r) => r.entry_id));
    // Three of them: the newest slices hold three content matches, and nothing older can outrank them.
    const three = await search(3);
    expect(three.ranking).toMatchObject({ exact: true, totalExact: false });
    expect(three.total).toBeLessThan(every.length);
    expect(three.results.map((r) => r.entry.entryId)).toEqual(every.slice(0, 3).map((r) => r.entry_id));
  });

  it('two common words never together in the window: the index looks up the pair, and finds old entries holding both', async () => {
    const pair = ns('exactness-pair');
    const rows: Row[] = [];
    for (let i = 0; i < 200; i++) {
      const at = new Date(NOW.getTime() - i * 3_600_000);
      rows.push({
        ...randomRow(pair, at),
        content: i % 2 ? 'redis cache notes' : 'postgres table notes',
        status: 'active',
      });
    }
    for (const days of [90, 120]) {
      rows.push({
        ...randomRow(pair, new Date(NOW.getTime() - days * DAY)),
        content: 'redis in front of postgres',
        status: 'active',
      });
    }
    await t.db
      .insertInto('memory_entries')
      .values(rows.map((r) => ({ ...r, metadata: '{}', updated_at: r.created_at })))
      .execute();
    const settings = searchSettings({ windowSize: 25, olderLimit: 10, olderMaxDensity: 0.05 });
    const terms = extractSearchTerms('redis postgres');
    const found = await findCandidates(
      t.db,
      { namespace: pair, tiers: ['stm', 'ltm'], tags: [] },
      { terms, halfLifeSeconds: 30 * 86_400, recencyWeight: 0.4, now: NOW.toISOString() },
      settings,
      { limit: 3, withRows: false },
    );
    // Each word alone is in half the namespace (over olderLimit); together, in two entries.
    expect(found?.via).toBe('index');
    const result = await searchEntries(
      t.db,
      pair,
      { query: 'redis postgres', tiers: ['stm', 'ltm'], topK: 3 },
      { settings, now: NOW },
    );
    expect(result.ranking).toMatchObject({ exact: true, totalExact: false });
    const every = await rankEveryMatch(pair, 'redis postgres', { tiers: ['stm', 'ltm'], tags: [] }, settings);
    expect(result.results.map((r) => r.entry.entryId)).toEqual(every.slice(0, 3).map((r) => r.entry_id));
    expect(result.results.slice(0, 2).map((r) => r.entry.content)).toEqual([
      'redis in front of postgres',
      'redis in front of postgres',
    ]);
  });

  it('score parts explain the score: text share of terms (tags half), recency 2^(-age/half-life)', async () => {
    const settings = searchSettings({ halfLifeDays: 10 });
    const result = await searchEntries(
      t.db,
      small,
      { query: 'alpha bravo', tiers: ['stm', 'ltm'], topK: 50 },
      { settings, now: NOW },
    );
    expect(result.results.length).toBeGreaterThan(0);
    const w = result.ranking?.weights as { text: number; recency: number };
    expect(w.text + w.recency).toBeCloseTo(1, 12);
    for (const r of result.results) {
      const parts = r.scoreParts as { text: number; recency: number };
      expect([0.25, 0.5, 0.75, 1]).toContain(parts.text);
      const ageDays = (NOW.getTime() - Date.parse(r.entry.createdAt)) / DAY;
      expect(parts.recency).toBeCloseTo(0.5 ** (ageDays / 10), 9);
      expect(r.score).toBeCloseTo(w.text * parts.text + w.recency * parts.recency, 12);
    }
  });
});
