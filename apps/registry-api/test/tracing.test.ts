import type { RequestListener } from 'node:http';
import { QUEUES } from '@pkgreg/contracts';
import { TEST_REDIS_URL, testKeyPrefix } from '@pkgreg/db/testing';
import { useTestDatabase } from '@pkgreg/db/vitest';
import { skillMd } from '@pkgreg/indexer/testing';
import { createLogger, startTracing, type Tracing, tracingSettings } from '@pkgreg/server-kit';
import { createRuntimeQueue, type RuntimeQueue } from '@pkgreg/tasks';
import {
  FakeGitHub,
  type OtlpReceiver,
  type ReceivedSpan,
  spansOfTrace,
  startOtlpReceiver,
} from '@pkgreg/testing';
import { Redis } from 'ioredis';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../src/app.js';
import { loadEnv } from '../src/env.js';
import { insertPackages, packageRow } from './fixtures.js';

// Traces of the registry (docs/decisions.md, Traces) against a local OTLP/HTTP receiver: a request is a
// server span continuing the caller's `traceparent`, a publish's indexing job carries the request's
// context to the worker (whose run span is tested with the edge's, apps/mcp-edge/test/tracing.test.ts),
// and the request's log lines carry its trace id.

const TRACE_ID = '0af7651916cd43dd8448eb211c80319c';
const CALLER_SPAN_ID = 'b7ad6b7169203331';
const database = useTestDatabase();
const prefix = testKeyPrefix('tracing');
const lines: string[] = [];
let receiver: OtlpReceiver;
let tracing: Tracing;
let gh: FakeGitHub;
let queue: RuntimeQueue;
let redis: Redis;
let app: RequestListener;

beforeAll(async () => {
  receiver = await startOtlpReceiver();
  gh = new FakeGitHub('', 'https://github.example');
  await gh.start();
  gh.addRepo({
    owner: 'octo',
    name: 'skills',
    defaultBranch: 'main',
    stars: 3,
    license: 'MIT',
    homepage: null,
    files: { 'pdf/SKILL.md': skillMd(['name: pdf', 'description: Fill PDF forms.']) },
  });
  gh.addUser('ghu_octo', 'octo');
  const env = loadEnv({
    OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: receiver.tracesUrl,
    GITHUB_API_URL: gh.apiUrl,
    GITHUB_WEB_URL: 'https://github.example',
    DETAIL_CACHE_TTL_MS: '0',
  });
  // Started before the app is built: createApp decides then whether to wrap requests in spans.
  tracing = await startTracing(tracingSettings(env, 'pkgreg-registry-api'));
  queue = createRuntimeQueue({ connection: TEST_REDIS_URL, prefix });
  redis = new Redis(TEST_REDIS_URL, { lazyConnect: true, keyPrefix: `${prefix}:` });
  const logger = createLogger('registry', 'debug', { write: (line: string) => void lines.push(line) });
  app = createApp({ db: database.db, redis, logger, env, queue });
  await insertPackages(database.db, [packageRow({ scope: 'acme', name: 'pdf-tools' })]);
});

afterAll(async () => {
  await queue?.queue(QUEUES.indexing).obliterate({ force: true });
  await queue?.close();
  redis?.disconnect();
  await gh?.stop();
  await tracing?.shutdown();
  await receiver?.close();
});

/** The spans of trace `traceId` once `enough` holds for them, flushing the SDK before each look. */
const spansOf = (traceId: string, enough: (spans: ReceivedSpan[]) => boolean) =>
  spansOfTrace(receiver, traceId, enough, () => tracing.flush());

describe('registry traces', () => {
  it('a publish: the request span continues traceparent, its job and log lines carry the trace', async () => {
    const res = await request(app)
      .post('/api/publish')
      .set('Content-Type', 'application/json')
      .set('Authorization', 'Bearer ghu_octo')
      .set('traceparent', `00-${TRACE_ID}-${CALLER_SPAN_ID}-01`)
      .send(JSON.stringify({ repository: 'octo/skills' }));
    expect(res.status).toBe(202);

    const [span] = await spansOf(TRACE_ID, (s) => s.length > 0);
    expect(span).toMatchObject({
      name: 'POST /api/publish',
      kind: 2,
      parentSpanId: CALLER_SPAN_ID,
      service: 'pkgreg-registry-api',
      attributes: { 'http.route': '/api/publish', 'http.response.status_code': 202 },
    });

    // The indexing job carries the request span's context: the worker's run becomes its child.
    const job = await queue.queue(QUEUES.indexing).getJob(`publish-${res.body.runId}`);
    expect(job?.data.traceContext).toEqual({ traceparent: `00-${TRACE_ID}-${span?.spanId}-01` });

    const queued = lines
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .find((l) => l.msg === 'publish queued');
    expect(queued).toMatchObject({ trace_id: TRACE_ID, span_id: span?.spanId });
  });

  it('detail, answered before Express, is a server span too', async () => {
    const traceId = 'c3'.repeat(16);
    const res = await request(app)
      .get('/api/packages/@acme/pdf-tools')
      .set('traceparent', `00-${traceId}-${CALLER_SPAN_ID}-01`);
    expect(res.status).toBe(200);
    const [span] = await spansOf(traceId, (s) => s.length > 0);
    expect(span).toMatchObject({
      name: 'GET /api/packages/:scope/:name',
      kind: 2,
      parentSpanId: CALLER_SPAN_ID,
      attributes: {
        'http.route': '/api/packages/:scope/:name',
        'http.request.method': 'GET',
        'url.path': '/api/packages/@acme/pdf-tools',
        'http.response.status_code': 200,
      },
    });
  });

  it('a 404 is a span without error status', async () => {
    const traceId = 'd4'.repeat(16);
    const res = await request(app)
      .get('/api/packages/@acme/missing')
      .set('traceparent', `00-${traceId}-${CALLER_SPAN_ID}-01`);
    expect(res.status).toBe(404);
    const [span] = await spansOf(traceId, (s) => s.length > 0);
    expect(span?.attributes['http.response.status_code']).toBe(404);
    expect(span?.status.code).toBe(0);
  });
});
