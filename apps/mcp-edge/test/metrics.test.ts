import { createLogger, type MetricsServer, startMetricsServer } from '@pkgreg/server-kit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  callTool,
  clientWithToken,
  type Harness,
  postMcp,
  rpc,
  type TestClient,
  useHarness,
} from './helpers.js';

// Issue 22, "See it": the edge's Prometheus metrics on an operator port of their own, read by a real
// scrape after real requests (the public listener wrapped as index.ts wraps it).

const h = useHarness({ EDGE_RATE_LIMIT_PER_MINUTE: '3' });
let client: TestClient;
let edge: { app: Harness['app'] };
let metricsServer: MetricsServer;
const MEMORY_SECRET = 'the-launch-code-is-swordfish';

beforeAll(async () => {
  client = await clientWithToken(h);
  edge = { app: h.edge.metrics.http.instrument(h.edge.handler) as unknown as Harness['app'] };
  metricsServer = await startMetricsServer({
    registry: h.edge.metrics.registry,
    port: 0,
    host: '127.0.0.1',
    logger: createLogger('test', 'silent'),
  });
});

afterAll(async () => {
  await metricsServer?.close();
});

async function scrape(): Promise<{ text: string; value(series: string): number }> {
  const res = await fetch(`http://127.0.0.1:${metricsServer.port}/metrics`);
  expect(res.status).toBe(200);
  const text = await res.text();
  const samples = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const at = line.lastIndexOf(' ');
    samples.set(line.slice(0, at), Number(line.slice(at + 1)));
  }
  return { text, value: (series) => samples.get(series) ?? 0 };
}

const mcpCount = (method: string, tool: string, outcome: string) =>
  `pkgreg_mcp_request_duration_seconds_count{method="${method}",tool="${tool}",outcome="${outcome}"}`;
const INFO = 'pkgreg.system.v1.info';
const PUT = 'pkgreg.memory.v1.put';

describe('edge metrics', () => {
  it('counts /mcp requests per method and tool, and refusals by reason', async () => {
    const before = await scrape();
    await rpc(edge, client.token, 'tools/list').expect(200);
    for (let i = 0; i < 4; i += 1) await callTool(edge, client.token, INFO, {});
    const put = await callTool(edge, client.token, PUT, {
      namespace: client.namespace,
      tier: 'stm',
      content: MEMORY_SECRET,
      tags: ['secret'],
    });
    expect(put.body.error).toBeUndefined();
    await callTool(edge, client.token, `${MEMORY_SECRET}.tool`, {});
    await rpc(edge, client.token, `${MEMORY_SECRET}/method`);
    await rpc(edge, undefined, 'tools/list').expect(401);

    // HTTP observations are made when each response closes, just after the client has read it.
    const httpTotal = (x: Awaited<ReturnType<typeof scrape>>) =>
      [
        ...x.text.matchAll(/^pkgreg_http_request_duration_seconds_count\{.*route="\/mcp".*\} (\d+)$/gm),
      ].reduce((sum, m) => sum + Number(m[1]), 0);
    let after = await scrape();
    while (httpTotal(after) < httpTotal(before) + 9) after = await scrape();
    const delta = (series: string) => after.value(series) - before.value(series);
    expect(delta(mcpCount('tools/list', 'none', 'ok'))).toBe(1);
    // EDGE_RATE_LIMIT_PER_MINUTE=3: the fourth system.info is rate limited.
    expect(delta(mcpCount('tools/call', INFO, 'ok'))).toBe(3);
    expect(delta(mcpCount('tools/call', INFO, 'rejected'))).toBe(1);
    expect(delta(`pkgreg_mcp_rejects_total{method="tools/call",tool="${INFO}",reason="rate_limited"}`)).toBe(
      1,
    );
    expect(delta(mcpCount('tools/call', PUT, 'ok'))).toBe(1);
    // Names the caller made up are `other`, never the caller's words.
    expect(delta(mcpCount('tools/call', 'other', 'rejected'))).toBe(1);
    expect(delta(mcpCount('other', 'none', 'rejected'))).toBe(1);
    expect(delta('pkgreg_mcp_rejects_total{method="tools/list",tool="none",reason="token_invalid"}')).toBe(1);
    // The HTTP view of the same nine requests: one route template, /mcp; the 429 and the 401 are 4xx.
    const http = (statusClass: string) =>
      delta(
        `pkgreg_http_request_duration_seconds_count{method="POST",route="/mcp",status_class="${statusClass}"}`,
      );
    expect(http('2xx') + http('4xx')).toBe(9);
    expect(http('4xx')).toBeGreaterThanOrEqual(2);
  });

  it('counts token-cache hits and misses', async () => {
    const before = await scrape();
    const fresh = await clientWithToken(h);
    await rpc(edge, fresh.token, 'ping').expect(200);
    await rpc(edge, fresh.token, 'ping').expect(200);
    const after = await scrape();
    const delta = (series: string) => after.value(series) - before.value(series);
    expect(delta('pkgreg_token_cache_lookups_total{result="miss"}')).toBe(1);
    expect(delta('pkgreg_token_cache_lookups_total{result="hit"}')).toBe(1);
  });

  it('reports the pool and Redis round trips', async () => {
    const { value } = await scrape();
    expect(value('pkgreg_db_pool_acquire_seconds_count{pool="main"}')).toBeGreaterThan(0);
    expect(value('pkgreg_db_pool_waiting_clients{pool="main"}')).toBe(0);
    // Rate limits run as Lua scripts (EVALSHA, or EVAL the first time).
    const scripts =
      value('pkgreg_redis_command_duration_seconds_count{command="evalsha"}') +
      value('pkgreg_redis_command_duration_seconds_count{command="eval"}');
    expect(scripts).toBeGreaterThan(0);
  });

  it('never puts a token, a namespace, memory content or a caller-chosen name in a label', async () => {
    const { text } = await scrape();
    expect(text).not.toContain(client.token);
    expect(text).not.toContain(client.namespace);
    expect(text).not.toContain(client.clientId);
    expect(text).not.toContain(MEMORY_SECRET);
    expect(text).not.toContain('swordfish');
  });

  it('a malformed body is counted under method none', async () => {
    const before = await scrape();
    await postMcp(edge, client.token, '{"jsonrpc":').expect(400);
    const after = await scrape();
    expect(
      after.value(mcpCount('none', 'none', 'rejected')) - before.value(mcpCount('none', 'none', 'rejected')),
    ).toBe(1);
  });
});
