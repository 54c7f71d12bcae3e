import { useTestDatabase } from '@pkgreg/db/vitest';
import { type EmbeddingsServer, startEmbeddingsServer } from '@pkgreg/testing';
import { sql } from 'kysely';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  createEmbedder,
  deleteEntry,
  type Embedder,
  EmbeddingError,
  embedEntries,
  embedRecentEntries,
  normalize,
  purgeNamespace,
  putEntry,
  readEmbeddings,
  searchEntries,
  searchSettings,
  similarity,
} from '../src/index.js';
import { ns, putArgs } from './helpers.js';

// Optional semantic ranking (docs/decisions.md, Memory search) against a local server speaking OpenAI's
// embeddings protocol (@pkgreg/testing): words of one concept share an axis there, so "database" is
// near "postgres".

const t = useTestDatabase();
let server: EmbeddingsServer;
let embedder: Embedder;
const API_KEY = 'sk-test-embeddings';

beforeAll(async () => {
  server = await startEmbeddingsServer({ apiKey: API_KEY, dimensions: 32 });
  embedder = createEmbedder({
    baseUrl: server.url,
    model: 'test-embed-1',
    apiKey: API_KEY,
    dimensions: 24,
    timeoutMs: 2000,
  });
});
afterAll(async () => {
  await server?.close();
});
beforeEach(() => {
  server.behaviour = 'ok';
});

async function put(namespace: string, content: string, tier: 'stm' | 'ltm' = 'ltm') {
  return (await putEntry(t.db, namespace, putArgs(namespace, { tier, content }))).entry.entryId;
}

describe('createEmbedder (OpenAI-compatible POST /v1/embeddings)', () => {
  it('sends model, input, dimensions and the bearer key; answers unit vectors in input order', async () => {
    server.requests.length = 0;
    const outcome = await embedder.embed(['postgres database', 'pizza lunch']);
    expect(outcome.ok).toBe(true);
    if (!outcome.ok) return;
    expect(server.requests).toEqual([
      {
        authorization: `Bearer ${API_KEY}`,
        model: 'test-embed-1',
        input: ['postgres database', 'pizza lunch'],
        dimensions: 24,
      },
    ]);
    expect(outcome.vectors.map((v) => v.length)).toEqual([24, 24]);
    for (const v of outcome.vectors) expect(similarity(v, v)).toBeCloseTo(1, 5);
    const expected = normalize(server.vectorOf('postgres database', 24)) as Float32Array;
    expect(similarity(outcome.vectors[0] as Float32Array, expected)).toBeCloseTo(1, 5);
  });

  it('names the failure: http_error (with status), timeout, bad_answer, network_error', async () => {
    server.behaviour = 'error';
    server.status = 503;
    expect(await embedder.embed(['x'])).toEqual({ ok: false, reason: 'http_error', status: 503 });
    server.behaviour = 'slow';
    server.delayMs = 1000;
    expect(await embedder.embed(['x'], { timeoutMs: 50 })).toEqual({ ok: false, reason: 'timeout' });
    server.behaviour = 'malformed';
    expect(await embedder.embed(['x'])).toEqual({ ok: false, reason: 'bad_answer' });
    const wrongKey = createEmbedder({ baseUrl: server.url, model: 'm', apiKey: 'nope', timeoutMs: 1000 });
    server.behaviour = 'ok';
    expect(await wrongKey.embed(['x'])).toEqual({ ok: false, reason: 'http_error', status: 401 });
    const nowhere = createEmbedder({ baseUrl: 'http://127.0.0.1:9/v1', model: 'm', timeoutMs: 1000 });
    expect(await nowhere.embed(['x'])).toEqual({ ok: false, reason: 'network_error' });
  });
});

describe('embedEntries (the worker job: embeddings computed on write, stored beside the entry)', () => {
  it('embeds active entries without an embedding of the model, once; skips deleted ones', async () => {
    const namespace = ns('embed-store');
    const a = await put(namespace, 'postgres holds the billing data');
    const b = await put(namespace, 'pizza for lunch on fridays');
    const gone = await put(namespace, 'deleted before it was embedded');
    await deleteEntry(t.db, namespace, { entryId: gone });
    server.requests.length = 0;
    expect(await embedEntries(t.db, embedder, namespace, [a, b, gone])).toEqual({ embedded: 2, skipped: 1 });
    expect(server.requests).toHaveLength(1);
    expect(await embedEntries(t.db, embedder, namespace, [a, b])).toEqual({ embedded: 0, skipped: 2 });
    expect(server.requests).toHaveLength(1);
    // Another namespace's id is not embedded through this one.
    expect(await embedEntries(t.db, embedder, ns('embed-other'), [a])).toEqual({ embedded: 0, skipped: 1 });

    const stored = await readEmbeddings(t.db, [a, b], 'test-embed-1', 24);
    expect([...stored.keys()].sort()).toEqual([a, b].sort());
    const expected = normalize(server.vectorOf('postgres holds the billing data', 24)) as Float32Array;
    expect(similarity(stored.get(a) as Float32Array, expected)).toBeCloseTo(1, 5);

    // A new model (configuration changed) replaces the embedding.
    const other = createEmbedder({
      baseUrl: server.url,
      model: 'test-embed-2',
      apiKey: API_KEY,
      timeoutMs: 2000,
    });
    expect(await embedEntries(t.db, other, namespace, [a])).toEqual({ embedded: 1, skipped: 0 });
    expect((await readEmbeddings(t.db, [a], 'test-embed-1', 24)).size).toBe(0);
    expect((await readEmbeddings(t.db, [a], 'test-embed-2', 32)).size).toBe(1);
  });

  it('without ids: embeds the newest entries that have none (what a compaction wrote)', async () => {
    const namespace = ns('embed-recent');
    const first = await put(namespace, 'first entry');
    await embedEntries(t.db, embedder, namespace, [first]);
    const second = await put(namespace, 'second entry');
    const third = await put(namespace, 'third entry');
    server.requests.length = 0;
    expect(await embedRecentEntries(t.db, embedder, namespace)).toEqual({ embedded: 2, skipped: 0 });
    expect(server.requests.map((r) => [...r.input].sort())).toEqual([['second entry', 'third entry']]);
    expect(
      [...(await readEmbeddings(t.db, [first, second, third], 'test-embed-1', 24)).keys()].sort(),
    ).toEqual([first, second, third].sort());
    expect(await embedRecentEntries(t.db, embedder, namespace)).toEqual({ embedded: 0, skipped: 0 });
  });

  it('throws EmbeddingError: permanent for a refused request (4xx), retryable for 5xx and timeouts', async () => {
    const namespace = ns('embed-errors');
    const id = await put(namespace, 'to be embedded');
    server.behaviour = 'error';
    server.status = 500;
    const retryable = await embedEntries(t.db, embedder, namespace, [id]).catch((e: unknown) => e);
    expect(retryable).toBeInstanceOf(EmbeddingError);
    expect(retryable).toMatchObject({ reason: 'http_error', status: 500, permanent: false });
    server.status = 429;
    expect(await embedEntries(t.db, embedder, namespace, [id]).catch((e: unknown) => e)).toMatchObject({
      permanent: false,
    });
    server.status = 400;
    expect(await embedEntries(t.db, embedder, namespace, [id]).catch((e: unknown) => e)).toMatchObject({
      permanent: true,
    });
    server.behaviour = 'malformed';
    expect(await embedEntries(t.db, embedder, namespace, [id]).catch((e: unknown) => e)).toMatchObject({
      reason: 'bad_answer',
      permanent: true,
    });
  });

  it('purge drops the namespace embeddings (derived from its content)', async () => {
    const namespace = ns('embed-purge');
    const id = await put(namespace, 'secret postgres password rotation');
    await embedEntries(t.db, embedder, namespace, [id]);
    expect((await readEmbeddings(t.db, [id], 'test-embed-1', 24)).size).toBe(1);
    await purgeNamespace(t.db, namespace);
    expect((await readEmbeddings(t.db, [id], 'test-embed-1', 24)).size).toBe(0);
    // A job arriving after the purge stores nothing: the entry is no longer active.
    expect(await embedEntries(t.db, embedder, namespace, [id])).toEqual({ embedded: 0, skipped: 1 });
  });
});

describe('searchEntries with an embedder', () => {
  const namespace = ns('semantic-search');
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    // Both match "notes" once; "database notes" is nearer in meaning to postgres. The pizza one is newer.
    ids.pg = await put(namespace, 'notes: postgres replication lag');
    await sql`update memory_entries set created_at = now() - interval '2 days' where entry_id = ${ids.pg}`.execute(
      t.db,
    );
    ids.pizza = await put(namespace, 'notes: pizza for the team lunch');
    ids.unembedded = await put(namespace, 'notes: nothing embedded here');
    await embedEntries(t.db, embedder, namespace, [ids.pg, ids.pizza]);
  });

  const search = (query: string, options: Parameters<typeof searchEntries>[3] = {}) =>
    searchEntries(t.db, namespace, { query, tiers: ['stm', 'ltm'] }, options);

  it('blends similarity into the score; each result carries its semantic part', async () => {
    const plain = await search('database notes');
    expect(plain.ranking).toMatchObject({ semantic: 'off' });
    // Text ties (one term of two each): the newest first.
    expect(plain.results[0]?.entry.entryId).not.toBe(ids.pg);

    const r = await search('database notes', { embedder });
    expect(r.ranking).toMatchObject({ semantic: 'used', exact: true, totalExact: true });
    const w = r.ranking?.weights as { text: number; recency: number; semantic: number };
    expect(w.text + w.recency + w.semantic).toBeCloseTo(1, 12);
    expect(r.results[0]?.entry.entryId).toBe(ids.pg);
    for (const x of r.results) {
      const p = x.scoreParts as { text: number; recency: number; semantic?: number };
      if (x.entry.entryId === ids.unembedded) expect(p.semantic).toBeUndefined();
      else expect(p.semantic).toBeGreaterThan(0);
      expect(x.score).toBeCloseTo(
        w.text * p.text + w.recency * p.recency + w.semantic * (p.semantic ?? 0),
        12,
      );
    }
    const byId = new Map(r.results.map((x) => [x.entry.entryId, x.scoreParts?.semantic ?? 0]));
    expect(byId.get(ids.pg as string)).toBeGreaterThan(byId.get(ids.pizza as string) ?? 1);
  });

  it('the query is embedded once per search, through the configured endpoint', async () => {
    server.requests.length = 0;
    await search('database notes', { embedder });
    expect(server.requests.map((r) => r.input)).toEqual([['database notes']]);
  });

  it('falls back to text and recency when the query cannot be embedded, and says why', async () => {
    const now = new Date();
    const plain = await search('database notes', { now });
    for (const [behaviour, reason] of [
      ['error', 'http_error'],
      ['malformed', 'bad_answer'],
      ['slow', 'timeout'],
    ] as const) {
      server.behaviour = behaviour;
      server.delayMs = 1000;
      const r = await search('database notes', { embedder, embedTimeoutMs: 100, now });
      expect(r.ranking, behaviour).toMatchObject({
        semantic: 'unavailable',
        semanticError: reason,
        exact: true,
      });
      expect(r.ranking?.weights.semantic).toBeUndefined();
      expect(r.results.map((x) => x.entry.entryId)).toEqual(plain.results.map((x) => x.entry.entryId));
      expect(r.results.map((x) => x.score)).toEqual(plain.results.map((x) => x.score));
      for (const x of r.results) expect(x.scoreParts?.semantic).toBeUndefined();
    }
  });

  it('re-ranks the best candidates by text and recency; exact only when every match was re-ranked', async () => {
    const many = ns('semantic-many');
    const entries = Array.from({ length: 12 }, (_, i) => `task note ${i} about ${i % 2 ? 'redis' : 'pizza'}`);
    const created = [];
    for (const content of entries) created.push(await put(many, content));
    await embedEntries(t.db, embedder, many, created);
    const settings = searchSettings({ semanticCandidates: 5 });
    const capped = await searchEntries(
      t.db,
      many,
      { query: 'cache note', tiers: ['ltm'], topK: 3 },
      { embedder, settings },
    );
    expect(capped.ranking).toMatchObject({ semantic: 'used', exact: false, totalExact: true });
    expect(capped.total).toBe(12);
    const all = await searchEntries(
      t.db,
      many,
      { query: 'cache note', tiers: ['ltm'], topK: 3 },
      { embedder, settings: searchSettings({ semanticCandidates: 12 }) },
    );
    expect(all.ranking).toMatchObject({ semantic: 'used', exact: true });
    // "cache" is near "redis": the redis notes lead once every match is re-ranked.
    for (const x of all.results) expect(x.entry.content).toContain('redis');
  });
});
