import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  commonEnvShape,
  createLogger,
  inJobSpan,
  injectTraceContext,
  inSpan,
  parseEnv,
  startTracing,
  traceLogFields,
  traceRequests,
  tracingEnabled,
  tracingSettings,
} from '../src/index.js';

// The standard OTEL_* variables as every app reads them (commonEnvShape), and what tracing off means:
// no SDK, the handlers themselves, no trace fields in logs. The spans themselves are tested end to end
// against a local OTLP receiver in the apps (apps/mcp-edge/test/tracing.test.ts).

const schema = z.object(commonEnvShape);
const settings = (source: Record<string, string>) => tracingSettings(parseEnv(schema, source), 'pkgreg-app');

describe('tracingSettings', () => {
  it('is off without an endpoint', () => {
    expect(settings({})).toBeUndefined();
    expect(settings({ OTEL_EXPORTER_OTLP_ENDPOINT: '' })).toBeUndefined();
  });

  it('appends /v1/traces to the base endpoint; the traces endpoint is used as given and wins', () => {
    expect(settings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/' })).toEqual({
      serviceName: 'pkgreg-app',
      url: 'http://collector:4318/v1/traces',
      sampler: 'parentbased_always_on',
      ratio: 1,
    });
    expect(
      settings({
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318',
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://traces.example/otlp/v1/traces',
        OTEL_SERVICE_NAME: 'edge-eu-1',
        OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
        OTEL_TRACES_SAMPLER_ARG: '0.25',
      }),
    ).toEqual({
      serviceName: 'edge-eu-1',
      url: 'https://traces.example/otlp/v1/traces',
      sampler: 'parentbased_traceidratio',
      ratio: 0.25,
    });
  });

  it('reads an empty variable as unset, as compose files write them', () => {
    expect(
      settings({
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318',
        OTEL_TRACES_SAMPLER: '',
        OTEL_TRACES_SAMPLER_ARG: '',
        OTEL_SDK_DISABLED: '',
        OTEL_EXPORTER_OTLP_HEADERS: '',
        OTEL_EXPORTER_OTLP_TIMEOUT: '',
      }),
    ).toStrictEqual({
      serviceName: 'pkgreg-app',
      url: 'http://collector:4318/v1/traces',
      sampler: 'parentbased_always_on',
      ratio: 1,
    });
  });

  it('passes the exporter headers (percent-decoded) and timeout on', () => {
    expect(
      settings({
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318',
        OTEL_EXPORTER_OTLP_HEADERS: 'x-api-key=k%3D1, x-tenant = eu ,',
        OTEL_EXPORTER_OTLP_TIMEOUT: '2500',
      }),
    ).toMatchObject({ headers: { 'x-api-key': 'k=1', 'x-tenant': 'eu' }, timeoutMs: 2500 });
  });

  it('refuses malformed exporter headers without showing them', () => {
    for (const value of ['sk-secret-value', '=sk-secret-value', 'bad name=sk-secret-value', 'k=%E0%A4%A']) {
      const parse = () => parseEnv(schema, { OTEL_EXPORTER_OTLP_HEADERS: value });
      expect(parse).toThrow(/OTEL_EXPORTER_OTLP_HEADERS: expected name=value pairs/);
      expect(parse).not.toThrow(/sk-secret-value|%E0/);
    }
    expect(() => parseEnv(schema, { OTEL_EXPORTER_OTLP_TIMEOUT: '0' })).toThrow(/OTEL_EXPORTER_OTLP_TIMEOUT/);
  });

  it('OTEL_SDK_DISABLED=true keeps it off', () => {
    expect(
      settings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_SDK_DISABLED: 'true' }),
    ).toBeUndefined();
  });

  it('refuses a bad endpoint, sampler or ratio at start, naming each', () => {
    const bad = () =>
      parseEnv(schema, {
        OTEL_EXPORTER_OTLP_ENDPOINT: 'not a url',
        OTEL_TRACES_SAMPLER: 'sometimes',
        OTEL_TRACES_SAMPLER_ARG: '2',
      });
    expect(bad).toThrow(/OTEL_EXPORTER_OTLP_ENDPOINT/);
    expect(bad).toThrow(/OTEL_TRACES_SAMPLER:/);
    expect(bad).toThrow(/OTEL_TRACES_SAMPLER_ARG/);
  });
});

describe('tracing off', () => {
  it('starts nothing and hands back the handlers themselves', async () => {
    const tracing = await startTracing(undefined);
    expect(tracing.enabled).toBe(false);
    expect(tracingEnabled()).toBe(false);
    const handler = () => {};
    expect(traceRequests(handler)).toBe(handler);
    expect(await inSpan('x', async () => 42)).toBe(42);
    expect(
      await inJobSpan({ name: 'j', queue: 'q', attempt: 1 }, { traceparent: 'x' }, async () => 'ran'),
    ).toBe('ran');
    expect(injectTraceContext()).toBeUndefined();
  });

  it('log lines carry no trace fields', () => {
    const lines: string[] = [];
    createLogger('t', 'info', { write: (line: string) => void lines.push(line) }).info({ a: 1 }, 'hello');
    const line = JSON.parse(lines[0] ?? '{}');
    expect(line).toMatchObject({ a: 1, msg: 'hello' });
    expect(line).not.toHaveProperty('trace_id');
    expect(line).not.toHaveProperty('span_id');
  });

  it('adds nothing per log line: one shared empty object that lines do not write into', () => {
    const fields = traceLogFields();
    expect(traceLogFields()).toBe(fields);
    expect(Object.isFrozen(fields)).toBe(true);
    const lines: string[] = [];
    const logger = createLogger('t', 'info', { write: (line: string) => void lines.push(line) });
    logger.info({ a: 1 }, 'one');
    logger.info('two');
    expect(JSON.parse(lines[0] ?? '{}')).toMatchObject({ a: 1, msg: 'one' });
    expect(JSON.parse(lines[1] ?? '{}')).not.toHaveProperty('a');
    expect(fields).toEqual({});
  });
});
