import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  closeServer,
  createHttpMetrics,
  createMetricsRegistry,
  listen,
  metricsEnvShape,
  parseEnv,
  setRejectReason,
  setRouteTemplate,
  startMetricsServer,
} from '../src/index.js';

// Issue 22: the operator listener for Prometheus and the HTTP request metrics every app uses.

const schema = z.object(metricsEnvShape(9464));
const lines: string[] = [];
const logger = pino({ level: 'info' }, { write: (line: string) => lines.push(line) });
const opened: Array<{ close(): Promise<void> }> = [];

afterEach(async () => {
  for (const s of opened.splice(0)) await s.close();
  lines.length = 0;
});

describe('METRICS_PORT / METRICS_HOST', () => {
  it('defaults to the app port on loopback; 0 is any free port, off is none', () => {
    expect(parseEnv(schema, {})).toEqual({ METRICS_HOST: '127.0.0.1', METRICS_PORT: 9464 });
    expect(parseEnv(schema, { METRICS_PORT: '' }).METRICS_PORT).toBe(9464);
    expect(parseEnv(schema, { METRICS_PORT: '0' }).METRICS_PORT).toBe(0);
    expect(parseEnv(schema, { METRICS_PORT: 'off' }).METRICS_PORT).toBe('off');
    expect(parseEnv(schema, { METRICS_PORT: '9100', METRICS_HOST: '0.0.0.0' })).toEqual({
      METRICS_HOST: '0.0.0.0',
      METRICS_PORT: 9100,
    });
  });

  it('refuses anything else, naming the variable', () => {
    expect(() => parseEnv(schema, { METRICS_PORT: 'yes' })).toThrow(/METRICS_PORT/);
    expect(() => parseEnv(schema, { METRICS_PORT: '70000' })).toThrow(/METRICS_PORT/);
  });
});

describe('startMetricsServer', () => {
  it('serves GET /metrics in the Prometheus text format and nothing else', async () => {
    const registry = createMetricsRegistry({ processMetrics: true });
    const server = await startMetricsServer({ registry, port: 0, host: '127.0.0.1', logger });
    opened.push(server);
    const res = await fetch(`http://127.0.0.1:${server.port}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe(registry.contentType);
    expect(await res.text()).toContain('# TYPE process_cpu_user_seconds_total counter');
    expect((await fetch(`http://127.0.0.1:${server.port}/`)).status).toBe(404);
    expect((await fetch(`http://127.0.0.1:${server.port}/metrics`, { method: 'POST' })).status).toBe(404);
  });

  it('off serves nothing', async () => {
    const server = await startMetricsServer({
      registry: createMetricsRegistry(),
      port: 'off',
      host: '127.0.0.1',
      logger,
    });
    expect(server.port).toBeUndefined();
  });

  it('a port in use is logged and the app goes on without metrics', async () => {
    const taken: Server = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    try {
      const port = (taken.address() as AddressInfo).port;
      const server = await startMetricsServer({
        registry: createMetricsRegistry(),
        port,
        host: '127.0.0.1',
        logger,
      });
      expect(server.port).toBeUndefined();
      const logged = lines.map((l) => JSON.parse(l) as { level: number; msg: string });
      expect(logged).toContainEqual(
        expect.objectContaining({ level: 40, msg: expect.stringContaining('METRICS_PORT') }),
      );
    } finally {
      taken.close();
    }
  });
});

describe('HTTP request metrics', () => {
  it('observes each response by method, route template and status class, and rejects by reason', async () => {
    const registry = createMetricsRegistry();
    const http = createHttpMetrics(registry);
    const server = await listen(
      http.instrument((req, res) => {
        if (req.url?.startsWith('/items/')) setRouteTemplate(req, '/items/:id');
        if (req.url === '/items/missing') {
          setRejectReason(res, 'not_found');
          res.writeHead(404).end();
          return;
        }
        res.writeHead(req.url?.startsWith('/items/') ? 200 : 500).end();
      }),
      0,
      '127.0.0.1',
    );
    opened.push({ close: () => closeServer(server) });
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    await fetch(`${base}/items/secret-1`);
    await fetch(`${base}/items/secret-2`);
    await fetch(`${base}/items/missing`);
    await fetch(`${base}/other?token=abc`, { method: 'BREW' as 'GET' }).catch(() => undefined);
    const count = async (labels: string) => {
      const text = await registry.metrics();
      const line = text
        .split('\n')
        .find((l) => l.startsWith(`pkgreg_http_request_duration_seconds_count{${labels}}`));
      return Number(line?.split(' ').pop() ?? 0);
    };
    // Observed when each response closes, just after the client has read it.
    while ((await count('method="GET",route="/items/:id",status_class="4xx"')) < 1)
      await new Promise((r) => setImmediate(r));
    expect(await count('method="GET",route="/items/:id",status_class="2xx"')).toBe(2);
    expect(await count('method="GET",route="/items/:id",status_class="4xx"')).toBe(1);
    const text = await registry.metrics();
    expect(text).toContain('pkgreg_http_rejects_total{route="/items/:id",reason="not_found"} 1');
    expect(text).not.toContain('secret');
    expect(text).not.toContain('token');
  });
});
