import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SCOPES } from '@pkgreg/contracts';
import type { RuntimeWorker } from '@pkgreg/runtime-worker';
import { createTestWorker } from '@pkgreg/runtime-worker/testing';
import { createLogger, startTracing, type Tracing, tracingSettings } from '@pkgreg/server-kit';
import { type OtlpReceiver, type ReceivedSpan, spansOfTrace, startOtlpReceiver } from '@pkgreg/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadEnv } from '../src/env.js';
import { callTool, clientWithToken, type TestClient, useHarness } from './helpers.js';

// Traces (docs/decisions.md, Traces) against a local OTLP/HTTP receiver: one trace from a request to the
// edge, through its admission, to the BullMQ job and the worker's run, continuing the caller's
// `traceparent`; and the log lines of a traced request carry its trace id.

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const CALLER_SPAN_ID = '00f067aa0ba902b7';
const traceparent = (traceId: string) => `00-${traceId}-${CALLER_SPAN_ID}-01`;

let receiver: OtlpReceiver;
let tracing: Tracing;
const edgeLines: string[] = [];
const workerLines: string[] = [];

// Tracing starts before the harness builds the edge: the app decides at build time whether to trace.
beforeAll(async () => {
  receiver = await startOtlpReceiver();
  const env = loadEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_SERVICE_NAME: 'edge-under-test' });
  tracing = await startTracing(tracingSettings(env, 'pkgreg-mcp-edge'));
});

// The registry's stand-in notes each request's traceparent and drops the connection: the registry tools
// fail (registry_unavailable) and the edge logs it.
const seenTraceparents: unknown[] = [];
const registry = createServer((req) => {
  seenTraceparents.push(req.headers.traceparent);
  req.socket.destroy();
}).listen(0, '127.0.0.1');
await once(registry, 'listening');
const h = useHarness(
  {
    REGISTRY_URL: `http://127.0.0.1:${(registry.address() as AddressInfo).port}`,
    REGISTRY_TIMEOUT_MS: '2000',
  },
  { logger: createLogger('edge', 'debug', { write: (line: string) => void edgeLines.push(line) }) },
);
let worker: RuntimeWorker;
let invoker: TestClient;

beforeAll(async () => {
  worker = createTestWorker(h.t.db, h.env.EDGE_QUEUE_PREFIX, {
    logger: createLogger('worker', 'debug', { write: (line: string) => void workerLines.push(line) }),
  });
  invoker = await clientWithToken(h, [SCOPES.agentsInvoke, SCOPES.registryRead, SCOPES.systemRead]);
});

afterAll(async () => {
  await worker?.close(5_000);
  await tracing?.shutdown();
  await receiver?.close();
  registry.close();
});

/** The spans of trace `traceId` once `enough` holds for them, flushing the SDK before each look. */
const spansOf = (traceId: string, enough: (spans: ReceivedSpan[]) => boolean) =>
  spansOfTrace(receiver, traceId, enough, () => tracing.flush());

const named = (spans: ReceivedSpan[], name: string) => spans.find((s) => s.name === name);
const linesWith = (lines: string[], traceId: string) =>
  lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.trace_id === traceId);

describe('one trace from an edge request to the worker run', () => {
  it('request -> admission -> job -> worker run, under the caller traceparent', async () => {
    const res = await callTool({ app: h.app }, invoker.token, 'pkgreg.agents.v1.invoke', {
      agentId: 'engineering.workflow',
      input: { type: 'text', text: 'plan a release' },
      executionMode: 'async',
    }).set('traceparent', traceparent(TRACE_ID));
    expect(res.status).toBe(200);

    const spans = await spansOf(TRACE_ID, (s) => Boolean(named(s, 'job agent.invoke')));
    const request = named(spans, 'POST /mcp');
    const admission = named(spans, 'mcp admission');
    const run = named(spans, 'job agent.invoke');
    expect(request).toMatchObject({ kind: 2, parentSpanId: CALLER_SPAN_ID, service: 'edge-under-test' });
    expect(request?.attributes).toMatchObject({
      'http.request.method': 'POST',
      'http.route': '/mcp',
      'http.response.status_code': 200,
      'mcp.method.name': 'tools/call',
      'gen_ai.tool.name': 'pkgreg.agents.v1.invoke',
    });
    expect(admission).toMatchObject({ kind: 1, parentSpanId: request?.spanId });
    expect(run).toMatchObject({ kind: 5, parentSpanId: request?.spanId });
    expect(run?.attributes).toMatchObject({
      'messaging.system': 'bullmq',
      'messaging.destination.name': 'pkgreg-runtime',
      'pkgreg.job.name': 'agent.invoke',
      'pkgreg.job.attempt': 1,
    });

    // The worker's log lines of the run carry the request's trace id and the run's span id.
    const started = linesWith(workerLines, TRACE_ID).find((l) => l.msg === 'job started');
    expect(started).toMatchObject({ trace_id: TRACE_ID, span_id: run?.spanId });
  });

  it('a refused request still has its span, with the admission span marked failed', async () => {
    const traceId = 'a1'.repeat(16);
    const res = await callTool({ app: h.app }, 'not-a-token', 'pkgreg.system.v1.info').set(
      'traceparent',
      traceparent(traceId),
    );
    expect(res.status).toBe(401);
    const spans = await spansOf(traceId, (s) => s.length >= 2);
    expect(named(spans, 'POST /mcp')?.attributes).toMatchObject({
      'http.response.status_code': 401,
      'pkgreg.reject_reason': 'token_invalid',
    });
    expect(named(spans, 'mcp admission')).toMatchObject({
      status: { code: 2, message: 'token_invalid' },
      attributes: { 'pkgreg.reject_reason': 'token_invalid' },
    });
  });

  it("the edge's log lines of a traced request carry its trace id; its registry calls its context", async () => {
    const traceId = 'b2'.repeat(16);
    const res = await callTool({ app: h.app }, invoker.token, 'pkgreg.registry.v1.search', { q: 'pdf' }).set(
      'traceparent',
      traceparent(traceId),
    );
    expect(res.body.error?.data?.reason).toBe('registry_unavailable');
    const request = named(await spansOf(traceId, (s) => Boolean(named(s, 'POST /mcp'))), 'POST /mcp');
    const failed = linesWith(edgeLines, traceId).find((l) => l.msg === 'registry request failed');
    expect(failed).toMatchObject({ trace_id: traceId, span_id: request?.spanId });
    // The registry would continue the trace: its request span a child of the edge's.
    expect(seenTraceparents).toContain(`00-${traceId}-${request?.spanId}-01`);
  });

  it('a request without traceparent starts a trace of its own', async () => {
    const before = receiver.spans.length;
    const res = await callTool({ app: h.app }, invoker.token, 'pkgreg.system.v1.info');
    expect(res.status).toBe(200);
    await tracing.flush();
    const root = receiver.spans
      .slice(before)
      .find((s) => s.name === 'POST /mcp' && s.parentSpanId === undefined);
    expect(root?.traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(root?.traceId).not.toBe(TRACE_ID);
  });
});
