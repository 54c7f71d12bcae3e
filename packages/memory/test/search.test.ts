import { MEMORY_LIMITS, MemorySearchResultSchema } from '@pkgreg/contracts';
import { useTestDatabase } from '@pkgreg/db/vitest';
import { beforeAll, describe, expect, it } from 'vitest';
import { deleteEntry, extractSearchTerms, putEntry, searchEntries } from '../src/index.js';
import { ns, putArgs } from './helpers.js';

const t = useTestDatabase();
const namespace = ns('search');
const ids: Record<string, string> = {};

async function put(key: string, fields: Parameters<typeof putArgs>[1]) {
  ids[key] = (await putEntry(t.db, namespace, putArgs(namespace, fields))).entry.entryId;
}

beforeAll(async () => {
  await put('pg', {
    tier: 'ltm',
    content: 'The user prefers PostgreSQL for relational databases',
    tags: ['preference'],
  });
  await put('pgTwice', {
    tier: 'ltm',
    content: 'Postgres replication and Postgres backups run nightly on databases',
    tags: ['ops'],
  });
  await put('redis', {
    tier: 'stm',
    content: 'Redis caches sessions for twenty minutes',
    tags: ['cache', 'ops'],
  });
  await put('deploy', { tier: 'stm', content: 'Deployment happens on Fridays', tags: ['deploy'] });
  await put('tagOnly', { tier: 'stm', content: 'unrelated words here', tags: ['kubernetes'] });
  await put('rankOne', { tier: 'stm', content: 'alpha delta' });
  await put('rankBoth', { tier: 'stm', content: 'alpha beta gamma' });
  await put('zetaTag', { tier: 'ltm', content: 'something else', tags: ['zeta'] });
  await put('zetaContent', { tier: 'ltm', content: 'zeta notes' });
  await put('gone', { tier: 'ltm', content: 'Postgres was deleted' });
  await deleteEntry(t.db, namespace, { entryId: ids.gone as string });
  await put('old', { tier: 'ltm', content: 'Postgres version 14 in use' });
  await put('new', {
    tier: 'ltm',
    content: 'Postgres version 15 in use',
    mode: 'supersede',
    supersedesEntryId: ids.old as string,
  });
  // Another namespace saying the same things must never show up.
  const other = ns('search-other');
  await putEntry(t.db, other, putArgs(other, { tier: 'ltm', content: 'Postgres PostgreSQL databases' }));
});

const both = ['stm', 'ltm'] as const;
const search = (query: string, extra: { tiers?: ('stm' | 'ltm')[]; tags?: string[]; topK?: number } = {}) =>
  searchEntries(t.db, namespace, {
    query,
    tiers: extra.tiers ?? [...both],
    tags: extra.tags,
    topK: extra.topK,
  });
const idsOf = (r: Awaited<ReturnType<typeof search>>) => r.results.map((x) => x.entry.entryId);

describe('searchEntries (decisions.md: search returns {results: [{entry, score}], total} over active entries)', () => {
  it('finds by stemmed content words, active entries only, within the namespace', async () => {
    const r = await search('postgres');
    expect(MemorySearchResultSchema.parse(r)).toEqual(r);
    // 'postgres' stems to 'postgr', a prefix of 'postgresql' too; the deleted and superseded ones are out.
    expect(new Set(idsOf(r))).toEqual(new Set([ids.pgTwice, ids.new, ids.pg]));
    expect(r.total).toBe(3);
    expect(idsOf(await search('prefer'))).toEqual([ids.pg]);
    for (const x of r.results) expect(x.entry.status).toBe('active');
  });

  it('ranks entries matching more of the terms higher, and orders by score', async () => {
    const r = await search('alpha beta');
    expect(idsOf(r)).toEqual([ids.rankBoth, ids.rankOne]);
    expect(r.results[0]?.score).toBeGreaterThan(r.results[1]?.score ?? 0);
    expect(r.results[1]?.score).toBeGreaterThan(0);
    const many = await search('postgres databases');
    for (let i = 1; i < many.results.length; i++) {
      expect(many.results[i - 1]?.score).toBeGreaterThanOrEqual(many.results[i]?.score ?? 0);
    }
  });

  it('a content match ranks above a tag match (content weight A, tags weight B)', async () => {
    expect(idsOf(await search('zeta'))).toEqual([ids.zetaContent, ids.zetaTag]);
  });

  it('every term is also a prefix', async () => {
    expect(idsOf(await search('postg'))).toContain(ids.pgTwice);
    expect(idsOf(await search('Deploy'))).toEqual([ids.deploy]);
    expect(idsOf(await search('kube'))).toEqual([ids.tagOnly]);
  });

  it('matches tags (weight B) below content (weight A)', async () => {
    const r = await search('cache');
    expect(idsOf(r)).toEqual([ids.redis]);
    const ops = await search('ops');
    expect(new Set(idsOf(ops))).toEqual(new Set([ids.pgTwice, ids.redis]));
  });

  it('stop words alone match nothing', async () => {
    expect(await search('the')).toMatchObject({ results: [], total: 0 });
  });

  it('filters by tier', async () => {
    expect(idsOf(await search('postgres', { tiers: ['stm'] }))).toEqual([]);
    expect(idsOf(await search('redis', { tiers: ['stm'] }))).toEqual([ids.redis]);
    expect(idsOf(await search('redis', { tiers: ['ltm'] }))).toEqual([]);
    expect(await searchEntries(t.db, namespace, { query: 'redis', tiers: [] })).toMatchObject({
      results: [],
      total: 0,
    });
  });

  it('filters by tags: entries carrying all given tags', async () => {
    expect(idsOf(await search('', { tags: ['ops'] })).sort()).toEqual([ids.pgTwice, ids.redis].sort());
    expect(idsOf(await search('', { tags: ['ops', 'cache'] }))).toEqual([ids.redis]);
    expect(idsOf(await search('postgres', { tags: ['ops'] }))).toEqual([ids.pgTwice]);
    expect(idsOf(await search('', { tags: ['ops', 'nope'] }))).toEqual([]);
  });

  it('a blank query lists the most recent active entries, scored by recency alone (text 0)', async () => {
    const r = await search('   ');
    expect(r.total).toBe(10);
    expect(r.ranking).toMatchObject({ exact: true, totalExact: true, semantic: 'off' });
    expect(idsOf(r)[0]).toBe(ids.new);
    expect(idsOf(r)).not.toContain(ids.gone);
    expect(idsOf(r)).not.toContain(ids.old);
    const recencyWeight = r.ranking?.weights.recency ?? 0;
    for (const x of r.results) {
      expect(x.scoreParts?.text).toBe(0);
      // Written moments ago: recency is 1 to a few parts in a billion.
      expect(x.scoreParts?.recency).toBeCloseTo(1, 6);
      expect(x.score).toBeCloseTo(recencyWeight * (x.scoreParts?.recency ?? 0), 12);
    }
  });

  it('topK caps results while total counts every match (default 10, max 50)', async () => {
    const r = await search('', { topK: 2 });
    expect(r.results).toHaveLength(2);
    expect(r.total).toBe(10);
    const big = ns('big');
    for (let i = 0; i < 60; i++) await putEntry(t.db, big, putArgs(big, { content: `note number ${i}` }));
    const dflt = await searchEntries(t.db, big, { query: 'note', tiers: ['stm'] });
    expect(dflt.results).toHaveLength(MEMORY_LIMITS.defaultSearchTopK);
    expect(dflt.total).toBe(60);
    const capped = await searchEntries(t.db, big, { query: 'note', tiers: ['stm'], topK: 500 });
    expect(capped.results).toHaveLength(MEMORY_LIMITS.maxSearchTopK);
    expect(capped.total).toBe(60);
  });

  it('nasty queries never throw (decisions.md: never a 5xx for any query text)', async () => {
    const nasty = [
      "'",
      '"',
      '\\',
      '!',
      '&|!():*<->',
      "postgres & 'redis",
      'a:* | b:*A',
      "O'Reilly",
      '\u0000',
      '😀🔥',
      'ñandú Überprüfung 数据库 データ',
      '<-> <2> !!!',
      "'); drop table memory_entries; --",
      '%_%',
      'x'.repeat(1024),
      Array.from({ length: 200 }, (_, i) => `w${i}`).join(' '),
      '\ud800',
      'the and or not',
    ];
    for (const q of nasty) {
      const r = await search(q);
      expect(MemorySearchResultSchema.parse(r)).toEqual(r);
    }
    expect(idsOf(await search("postgres & 'redis"))).toEqual(
      expect.arrayContaining([ids.redis, ids.pgTwice]),
    );
    expect(await search('!!!')).toMatchObject({ results: [], total: 0 });
  });
});

describe('extractSearchTerms', () => {
  it('keeps letters and digits, lowercases, dedupes, caps count and length', () => {
    expect(extractSearchTerms("Postgres & 'postgres' | v15:*")).toEqual(['postgres', 'v15']);
    expect(extractSearchTerms('Ünïcode 数据库')).toEqual(['ünïcode', '数据库']);
    expect(extractSearchTerms(Array.from({ length: 100 }, (_, i) => `t${i}`).join(' '))).toHaveLength(32);
    expect(extractSearchTerms('y'.repeat(500))[0]).toHaveLength(64);
  });
});
