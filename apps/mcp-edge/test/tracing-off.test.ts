import { QUEUES, SCOPES } from '@pkgreg/contracts';
import { TEST_REDIS_URL } from '@pkgreg/db/testing';
import {
  createLogger,
  injectTraceContext,
  startTracing,
  type Tracing,
  tracingEnabled,
  tracingSettings,
} from '@pkgreg/server-kit';
import { createRuntimeQueue, type RuntimeQueue } from '@pkgreg/tasks';
import { type OtlpReceiver, startOtlpReceiver } from '@pkgreg/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadEnv } from '../src/env.js';
import { callTool, clientWithToken, useHarness } from './helpers.js';

// Traces are off unless an OTLP endpoint is configured: no SDK starts, requests and jobs carry no trace
// context, log lines no trace id, and nothing is sent anywhere (docs/decisions.md, Traces).

let receiver: OtlpReceiver;
let tracing: Tracing;
let queue: RuntimeQueue;
const lines: string[] = [];

beforeAll(async () => {
  // A receiver is listening, as one might be on the machine: with no endpoint configured nothing finds it.
  receiver = await startOtlpReceiver();
  tracing = await startTracing(tracingSettings(loadEnv({}), 'pkgreg-mcp-edge'));
});

const h = useHarness(
  { REGISTRY_URL: 'http://127.0.0.1:1', REGISTRY_TIMEOUT_MS: '2000' },
  { logger: createLogger('edge', 'debug', { write: (line: string) => void lines.push(line) }) },
);

beforeAll(() => {
  queue = createRuntimeQueue({ connection: TEST_REDIS_URL, prefix: h.env.EDGE_QUEUE_PREFIX });
});

afterAll(async () => {
  await queue?.close();
  await tracing?.shutdown();
  await receiver?.close();
});

describe('tracing off', () => {
  it('starts no SDK when no endpoint is set, or when OTEL_SDK_DISABLED says so', () => {
    expect(tracingSettings(loadEnv({}), 'x')).toBeUndefined();
    expect(
      tracingSettings(loadEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_SDK_DISABLED: 'true' }), 'x'),
    ).toBeUndefined();
    expect(tracing.enabled).toBe(false);
    expect(tracingEnabled()).toBe(false);
  });

  it('a request with traceparent is answered without spans, trace context in its job, or trace ids in logs', async () => {
    const client = await clientWithToken(h, [SCOPES.agentsInvoke, SCOPES.registryRead]);
    const traceparent = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
    const invoke = await callTool(h, client.token, 'pkgreg.agents.v1.invoke', {
      agentId: 'engineering.workflow',
      input: { type: 'text', text: 'plan' },
      executionMode: 'async',
    }).set('traceparent', traceparent);
    expect(invoke.status).toBe(200);
    const taskId = invoke.body.result?.task?.taskId as string;
    const job = await queue.queue(QUEUES.runtime).getJob(taskId);
    expect(job?.data.taskId).toBe(taskId);
    expect(job?.data).not.toHaveProperty('traceContext');

    // A request that logs (the registry is unreachable) logs no trace id.
    await callTool(h, client.token, 'pkgreg.registry.v1.search', { q: 'pdf' }).set(
      'traceparent',
      traceparent,
    );
    const logged = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(logged.map((l) => l.msg)).toContain('registry request failed');
    expect(logged.filter((l) => 'trace_id' in l || 'span_id' in l)).toEqual([]);

    expect(injectTraceContext()).toBeUndefined();
    await tracing.flush();
    expect(receiver.requests).toBe(0);
  });
});
