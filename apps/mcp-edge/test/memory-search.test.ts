import { MemorySearchResultSchema, QUEUES, type ToolDescriptor } from '@pkgreg/contracts';
import { TEST_REDIS_URL } from '@pkgreg/db/testing';
import { createEmbedder, embedEntries } from '@pkgreg/memory';
import { type EmbeddingsServer, startEmbeddingsServer } from '@pkgreg/testing';
import { Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callTool, clientWithToken, createHarness, type Harness, rpc, type TestClient } from './helpers.js';

// pkgreg.memory.v1.search through the edge (docs/decisions.md, Memory search): score parts and ranking
// metadata in the result and its outputSchema; with EMBEDDING_BASE_URL set, each put enqueues a
// memory.embed job (ids only) and search blends similarity in, falling back to text and recency when the
// endpoint fails. The embeddings endpoint is a local server speaking OpenAI's protocol.

const KEY = 'sk-edge-test';
let server: EmbeddingsServer;
let h: Harness;
let plain: Harness;
let c: TestClient;

beforeAll(async () => {
  server = await startEmbeddingsServer({ apiKey: KEY });
  h = await createHarness({
    EMBEDDING_BASE_URL: server.url,
    EMBEDDING_MODEL: 'edge-embed',
    EMBEDDING_API_KEY: KEY,
    EMBEDDING_QUERY_TIMEOUT_MS: '200',
    MEMORY_SEARCH_HALF_LIFE_DAYS: '7',
  });
  plain = await createHarness();
  c = await clientWithToken(h);
});

afterAll(async () => {
  await h?.close();
  await plain?.close();
  await server?.close();
});

const put = (target: Harness, who: TestClient, content: string) =>
  callTool(target, who.token, 'pkgreg.memory.v1.put', { namespace: who.namespace, tier: 'ltm', content });
const search = (target: Harness, who: TestClient, query: string) =>
  callTool(target, who.token, 'pkgreg.memory.v1.search', { namespace: who.namespace, query });

/** The edge's runtime queue (the runtime worker consumes it; here the test reads it). */
async function embedJobs(target: Harness) {
  const queue = new Queue(QUEUES.runtime, {
    connection: { url: TEST_REDIS_URL },
    prefix: target.env.EDGE_QUEUE_PREFIX,
  });
  try {
    const jobs = await queue.getJobs(['waiting', 'delayed', 'active', 'completed', 'failed']);
    return jobs.filter((j) => j.name === 'memory.embed');
  } finally {
    await queue.close();
  }
}

async function until<T>(fn: () => Promise<T | undefined>, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await fn();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('memory.search result: score parts and ranking', () => {
  it('tools/list outputSchema describes scoreParts and ranking', async () => {
    const tools = (await rpc(h, c.token, 'tools/list')).body.result.tools as ToolDescriptor[];
    const descriptor = tools.find((t) => t.name === 'pkgreg.memory.v1.search') as ToolDescriptor;
    const schema = descriptor.outputSchema as {
      properties: Record<
        string,
        { properties?: Record<string, unknown>; items?: { properties: Record<string, unknown> } }
      >;
    };
    expect(Object.keys(schema.properties)).toEqual(expect.arrayContaining(['results', 'total', 'ranking']));
    expect(Object.keys(schema.properties.results?.items?.properties ?? {})).toEqual(
      expect.arrayContaining(['entry', 'score', 'scoreParts']),
    );
    expect(Object.keys(schema.properties.ranking?.properties ?? {})).toEqual(
      expect.arrayContaining(['weights', 'halfLifeDays', 'exact', 'totalExact', 'semantic']),
    );
  });

  it('without an embeddings endpoint: text and recency, no job enqueued', async () => {
    const who = await clientWithToken(plain);
    await put(plain, who, 'postgres stores the orders');
    const res = await search(plain, who, 'postgres');
    const result = MemorySearchResultSchema.parse(res.body.result);
    expect(res.body.result.structuredContent).toEqual(result);
    expect(result.ranking).toMatchObject({
      semantic: 'off',
      exact: true,
      totalExact: true,
      halfLifeDays: 30,
    });
    expect(result.results[0]?.scoreParts).toEqual({ text: 1, recency: expect.any(Number) });
    expect(await embedJobs(plain)).toEqual([]);
  });
});

describe('with EMBEDDING_BASE_URL', () => {
  it('put enqueues memory.embed with the entry id only; search blends the similarity in', async () => {
    const pg = (await put(h, c, 'notes: postgres replication lag')).body.result.entry.entryId as string;
    const pizza = (await put(h, c, 'notes: pizza for the team lunch')).body.result.entry.entryId as string;
    const jobs = await until(async () => {
      const found = await embedJobs(h);
      return found.length >= 2 ? found : undefined;
    });
    const data = jobs.map((j) => j.data).sort((a, b) => a.entryIds[0].localeCompare(b.entryIds[0]));
    expect(data).toEqual([pg, pizza].sort().map((id) => ({ namespace: c.namespace, entryIds: [id] })));
    expect(JSON.stringify(jobs.map((j) => j.data))).not.toContain(KEY);

    // Stands in for apps/runtime-worker's memory.embed handler (tested there through BullMQ).
    const embedder = createEmbedder({
      baseUrl: server.url,
      model: 'edge-embed',
      apiKey: KEY,
      timeoutMs: 5000,
    });
    for (const job of jobs) await embedEntries(h.t.db, embedder, job.data.namespace, job.data.entryIds);

    const res = await search(h, c, 'database notes');
    const result = MemorySearchResultSchema.parse(res.body.result);
    expect(result.ranking).toMatchObject({ semantic: 'used', halfLifeDays: 7 });
    expect(result.ranking?.weights.semantic).toBeGreaterThan(0);
    expect(result.results.map((r) => r.entry.entryId)).toEqual([pg, pizza]);
    for (const r of result.results) expect(r.scoreParts?.semantic).toBeGreaterThan(0);
  });

  it('an endpoint that fails or times out: text and recency, and the result says why', async () => {
    // The endpoint's answer would come long after the test's own timeout: only the edge's query
    // timeout (200 ms here) can answer this search, so no clock needs reading.
    server.behaviour = 'slow';
    server.delayMs = 60_000;
    try {
      const res = await search(h, c, 'database notes');
      expect(res.body.result.ranking).toMatchObject({ semantic: 'unavailable', semanticError: 'timeout' });
      server.behaviour = 'error';
      expect((await search(h, c, 'database notes')).body.result.ranking).toMatchObject({
        semantic: 'unavailable',
        semanticError: 'http_error',
      });
    } finally {
      server.behaviour = 'ok';
    }
  });
});
