import { createHash } from 'node:crypto';
import { createDb } from '@pkgreg/db';
import { createLogger, requestRedisOptions } from '@pkgreg/server-kit';
import { captureLogs } from '@pkgreg/testing';
import { Redis } from 'ioredis';
import request from 'supertest';
import { afterAll, describe, expect, it } from 'vitest';
import { createEdge, type Edge } from '../src/app.js';
import { callTool, expectRpcError, forgeToken, HOST, RESOURCE, useHarness } from './helpers.js';

// A PostgreSQL or Redis outage (issue 22, Trust it): a request that needs the missing service is refused
// with service_unavailable (-32016, HTTP 503, Retry-After, data.retryAfterSeconds), never internal_error,
// and the outage is logged once by the process, not a stack per request.

const h = useHarness();

function capturedLogger() {
  const logs = captureLogs();
  return { logger: createLogger('edge-outage', 'info', logs.destination), lines: logs.records };
}

const closers: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const close of closers) await close();
});

function expectOutageRefusal(res: {
  status: number;
  headers: Record<string, string>;
  body: {
    error?: { code: number; data?: { reason?: string; requestId?: string; retryAfterSeconds?: number } };
  };
}): void {
  expectRpcError(res, 503, 'service_unavailable');
  expect(res.body.error?.code).toBe(-32016);
  expect(res.body.error?.data?.retryAfterSeconds).toBe(1);
  expect(res.headers['retry-after']).toBe('1');
}

const putArgs = (namespace: string) => ({ namespace, tier: 'stm', content: 'outage test entry' });

describe('dependency outages on /mcp', () => {
  it('Redis unreachable: refused with service_unavailable at once, logged once', async () => {
    const { logger, lines } = capturedLogger();
    // Nothing listens on port 1: every command fails as during a Redis outage. The command timeout is
    // past the test's own, so only the refused connection can answer in time ("at once").
    const dead = new Redis('redis://127.0.0.1:1', { ...requestRedisOptions(600_000), lazyConnect: true });
    dead.on('error', () => {});
    const edge: Edge = createEdge({ db: h.t.db, redis: dead, logger, env: h.env });
    closers.push(async () => {
      await edge.shutdown();
      dead.disconnect();
    });
    const token = await forgeToken(h);
    for (let i = 0; i < 3; i++) {
      const res = await callTool(edge, token, 'pkgreg.system.v1.info');
      expectOutageRefusal(res);
    }
    expect(lines.filter((l) => l.msg === 'redis unavailable')).toHaveLength(1);
    expect(lines.filter((l) => l.msg === 'mcp request failed' || (l.level as number) >= 50)).toEqual([]);
  });

  it('PostgreSQL unreachable: memory.put is refused with service_unavailable, logged once', async () => {
    const { logger, lines } = capturedLogger();
    // Nothing listens on port 1: every query fails as during a PostgreSQL outage.
    const broken = createDb('postgres://postgres@127.0.0.1:1/none', { max: 1 });
    const token = await forgeToken(h, { clientId: 'pkc_outage' });
    const namespace = `app:${createHash('sha256').update(`${RESOURCE}|pkc_outage`).digest('hex')}`;
    const edge = createEdge({ db: broken, redis: h.redis, logger, env: h.env });
    closers.push(async () => {
      await edge.shutdown();
      await broken.destroy();
    });
    for (let i = 0; i < 3; i++) {
      const res = await callTool(edge, token, 'pkgreg.memory.v1.put', putArgs(namespace));
      expectOutageRefusal(res);
    }
    expect(lines.filter((l) => l.msg === 'postgres unavailable')).toHaveLength(1);
    expect(lines.filter((l) => l.msg === 'mcp request failed' || (l.level as number) >= 50)).toEqual([]);

    // The token endpoint reads the client: RFC 6749's temporarily_unavailable, 503 + Retry-After.
    const issued = await request(edge.app)
      .post('/mcp/token')
      .set('Host', HOST)
      .auth('pkc_outage', 'a-secret-of-the-client')
      .type('form')
      .send({ grant_type: 'client_credentials', resource: RESOURCE });
    expect(issued.status).toBe(503);
    expect(issued.headers['retry-after']).toBe('1');
    expect(issued.body).toEqual({ error: 'temporarily_unavailable' });
    expect(lines.filter((l) => l.msg === 'postgres unavailable')).toHaveLength(1);
    expect(lines.filter((l) => (l.level as number) >= 50)).toEqual([]);
  });
});
