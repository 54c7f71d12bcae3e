import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  type Attributes,
  type Context,
  context,
  propagation,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  type Tracer,
  trace,
} from '@opentelemetry/api';
import { z } from 'zod';
import { routeTemplateOf } from './metrics.js';

// OpenTelemetry traces, off unless an OTLP endpoint is configured (docs/decisions.md, Traces). Spans are
// made by our own code at the hops that matter (a request, the edge's admission, a job and its run), not
// by auto-instrumentation: the apps are ESM, and patching every Redis command and query would cost each
// request even when nobody looks. While tracing is off nothing here allocates a span or reads a context,
// and the SDK is not even loaded.

// An empty variable (compose files write `NAME=` for an unset one) is unset, as the OTel spec says.
const emptyIsUnset = (v: unknown) => (v === '' ? undefined : v);
const optionalUrl = z.preprocess(emptyIsUnset, z.url().optional());

/** An HTTP header name (RFC 9110 token). */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/**
 * OTEL_EXPORTER_OTLP_HEADERS as the spec writes it: `name=value` pairs, comma-separated, values
 * percent-decoded. Issues never quote the value: it usually holds an API key.
 */
const otlpHeaders = z.preprocess(
  emptyIsUnset,
  z
    .string()
    .transform((raw, ctx) => {
      const headers: Record<string, string> = {};
      for (const pair of raw.split(',')) {
        if (!pair.trim()) continue;
        const eq = pair.indexOf('=');
        const name = eq < 0 ? '' : pair.slice(0, eq).trim();
        let value: string | undefined;
        try {
          value = decodeURIComponent(pair.slice(eq + 1).trim());
        } catch {
          value = undefined;
        }
        if (!HEADER_NAME.test(name) || value === undefined) {
          ctx.addIssue({
            code: 'custom',
            message: 'expected name=value pairs, comma-separated, values percent-encoded',
          });
          return z.NEVER;
        }
        headers[name] = value;
      }
      return headers;
    })
    .optional(),
);

/** The standard OTEL_* variables each app's env.ts spreads in (names and meanings as the OTel spec says). */
export const tracingEnvShape = {
  /** OTLP/HTTP base URL (`/v1/traces` is appended); setting it turns traces on. */
  OTEL_EXPORTER_OTLP_ENDPOINT: optionalUrl,
  /** Full OTLP/HTTP traces URL; wins over OTEL_EXPORTER_OTLP_ENDPOINT. */
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: optionalUrl,
  /** service.name on every span; defaults to the app's own name. */
  OTEL_SERVICE_NAME: z.preprocess(emptyIsUnset, z.string().min(1).optional()),
  /** Headers sent with every export (`name=value,…`), e.g. a hosted backend's API key. Never logged. */
  OTEL_EXPORTER_OTLP_HEADERS: otlpHeaders,
  /** How long one export may take (ms); the exporter's default (10 s) when unset. */
  OTEL_EXPORTER_OTLP_TIMEOUT: z.preprocess(emptyIsUnset, z.coerce.number().int().min(1).optional()),
  OTEL_TRACES_SAMPLER: z.preprocess(
    emptyIsUnset,
    z
      .enum([
        'always_on',
        'always_off',
        'traceidratio',
        'parentbased_always_on',
        'parentbased_always_off',
        'parentbased_traceidratio',
      ])
      .default('parentbased_always_on'),
  ),
  /** The ratio of the *traceidratio samplers, 0..1; empty is unset (z.coerce would make it 0). */
  OTEL_TRACES_SAMPLER_ARG: z.preprocess(emptyIsUnset, z.coerce.number().min(0).max(1).default(1)),
  /** `true` keeps traces off whatever the endpoint says (the spec's kill switch). */
  OTEL_SDK_DISABLED: z.preprocess(
    emptyIsUnset,
    z
      .enum(['true', 'false'])
      .default('false')
      .transform((v) => v === 'true'),
  ),
};

const tracingEnvSchema = z.object(tracingEnvShape);
type TracingEnv = z.infer<typeof tracingEnvSchema>;

export interface TracingSettings {
  serviceName: string;
  /** Where spans are POSTed (OTLP/HTTP, JSON). */
  url: string;
  sampler: TracingEnv['OTEL_TRACES_SAMPLER'];
  ratio: number;
  /** Sent with every export (OTEL_EXPORTER_OTLP_HEADERS); may hold an API key, so never logged. */
  headers?: Record<string, string>;
  /** Longest export (OTEL_EXPORTER_OTLP_TIMEOUT, ms). */
  timeoutMs?: number;
}

/** The tracing settings of a parsed env, or undefined when traces are off (no endpoint, or disabled). */
export function tracingSettings(env: TracingEnv, defaultServiceName: string): TracingSettings | undefined {
  if (env.OTEL_SDK_DISABLED) return undefined;
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT;
  const url =
    env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? (base ? `${base.replace(/\/+$/, '')}/v1/traces` : undefined);
  if (!url) return undefined;
  return {
    serviceName: env.OTEL_SERVICE_NAME ?? defaultServiceName,
    url,
    sampler: env.OTEL_TRACES_SAMPLER,
    ratio: env.OTEL_TRACES_SAMPLER_ARG,
    ...(env.OTEL_EXPORTER_OTLP_HEADERS ? { headers: env.OTEL_EXPORTER_OTLP_HEADERS } : {}),
    ...(env.OTEL_EXPORTER_OTLP_TIMEOUT ? { timeoutMs: env.OTEL_EXPORTER_OTLP_TIMEOUT } : {}),
  };
}

export interface Tracing {
  readonly enabled: boolean;
  /** Exports the spans ended so far (tests; shutdown does it too). */
  flush(): Promise<void>;
  /** Flushes and stops the SDK; call last on shutdown. */
  shutdown(): Promise<void>;
}

const OFF: Tracing = { enabled: false, flush: async () => {}, shutdown: async () => {} };
let tracer: Tracer | undefined;

/** True once startTracing has started the SDK in this process. */
export function tracingEnabled(): boolean {
  return tracer !== undefined;
}

/**
 * Starts the OpenTelemetry Node SDK (OTLP/HTTP JSON exporter, W3C trace context) when `settings` is
 * given; otherwise returns at once without loading it. Call before building the app: the request
 * wrappers decide at build time whether to trace.
 */
export async function startTracing(settings: TracingSettings | undefined): Promise<Tracing> {
  if (!settings) return OFF;
  if (tracer) throw new Error('tracing is already started in this process');
  // Loaded only when configured: the SDK and its exporters are a large module graph.
  const [{ NodeSDK }, { OTLPTraceExporter }, sdkTrace, { W3CTraceContextPropagator }] = await Promise.all([
    import('@opentelemetry/sdk-node'),
    import('@opentelemetry/exporter-trace-otlp-http'),
    import('@opentelemetry/sdk-trace'),
    import('@opentelemetry/core'),
  ]);
  const ratio = new sdkTrace.TraceIdRatioBasedSampler(settings.ratio);
  const samplers = {
    always_on: new sdkTrace.AlwaysOnSampler(),
    always_off: new sdkTrace.AlwaysOffSampler(),
    traceidratio: ratio,
    parentbased_always_on: new sdkTrace.ParentBasedSampler({ root: new sdkTrace.AlwaysOnSampler() }),
    parentbased_always_off: new sdkTrace.ParentBasedSampler({ root: new sdkTrace.AlwaysOffSampler() }),
    parentbased_traceidratio: new sdkTrace.ParentBasedSampler({ root: ratio }),
  };
  const processor = new sdkTrace.BatchSpanProcessor({
    // The validated headers and timeout are passed as given: the exporter's own reading of process.env
    // would accept what env.ts refused.
    exporter: new OTLPTraceExporter({
      url: settings.url,
      ...(settings.headers ? { headers: settings.headers } : {}),
      ...(settings.timeoutMs ? { timeoutMillis: settings.timeoutMs } : {}),
    }),
  });
  const sdk = new NodeSDK({
    serviceName: settings.serviceName,
    textMapPropagator: new W3CTraceContextPropagator(),
    sampler: samplers[settings.sampler],
    spanProcessors: [processor],
    // Traces only: without these the SDK would also start log and metric exporters from OTEL_* defaults.
    metricReaders: [],
    logRecordProcessors: [],
    instrumentations: [],
  });
  sdk.start();
  tracer = trace.getTracer('pkgreg');
  return {
    enabled: true,
    flush: () => processor.forceFlush(),
    async shutdown() {
      tracer = undefined;
      await sdk.shutdown();
      trace.disable();
      context.disable();
      propagation.disable();
    },
  };
}

/** W3C trace context as a plain object: what job data carries from the enqueuing request to the run. */
export interface TraceCarrier {
  traceparent?: string;
  tracestate?: string;
}

/** The active context as W3C headers, or undefined when tracing is off or nothing is being traced. */
export function injectTraceContext(): TraceCarrier | undefined {
  if (!tracer) return undefined;
  const carrier: TraceCarrier = {};
  propagation.inject(context.active(), carrier);
  return carrier.traceparent ? carrier : undefined;
}

/** `headers` plus the active trace context, so an outgoing request joins the trace; `headers` itself when off. */
export function withTraceHeaders<H extends Record<string, string>>(headers: H): H {
  const carrier = injectTraceContext();
  return carrier ? { ...headers, ...carrier } : headers;
}

/** The context a W3C carrier (request headers, job data) names, on top of the root context. */
export function extractTraceContext(carrier: unknown): Context {
  if (!carrier || typeof carrier !== 'object') return ROOT_CONTEXT;
  return propagation.extract(ROOT_CONTEXT, carrier);
}

/**
 * Wraps a request listener (or a connect-style middleware) so each request runs in a server span, child
 * of the caller's `traceparent` when it sends one. Returns `handler` itself when tracing is off. `route`
 * names the span when the caller knows it; otherwise the request's route template does (metrics.ts), or
 * the method alone.
 */
export function traceRequests<H extends (...args: never[]) => void>(handler: H, route?: string): H {
  const active = tracer;
  if (!active) return handler;
  const run = handler as unknown as (...args: unknown[]) => void;
  const traced = (req: IncomingMessage, res: ServerResponse, ...rest: unknown[]) => {
    const method = req.method ?? 'GET';
    const url = req.url ?? '/';
    const query = url.indexOf('?');
    const parent = propagation.extract(ROOT_CONTEXT, req.headers);
    const span = active.startSpan(
      route ? `${method} ${route}` : method,
      {
        kind: SpanKind.SERVER,
        attributes: { 'http.request.method': method, 'url.path': query < 0 ? url : url.slice(0, query) },
      },
      parent,
    );
    res.once('close', () => endRequestSpan(span, req, res, route));
    context.with(trace.setSpan(parent, span), run, undefined, req, res, ...rest);
  };
  return traced as unknown as H;
}

function endRequestSpan(span: Span, req: IncomingMessage, res: ServerResponse, route?: string): void {
  // The same template the metrics label requests with: set by the fast paths, else Express's matched route.
  const name = route ?? routeTemplateOf(req);
  if (name) {
    span.setAttribute('http.route', name);
    if (!route) span.updateName(`${req.method ?? 'GET'} ${name}`);
  }
  span.setAttribute('http.response.status_code', res.statusCode);
  if (res.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
  if (!res.writableFinished) span.setAttribute('pkgreg.response.aborted', true);
  span.end();
}

/** Sets attributes on the active span (the request's, a job run's); nothing when tracing is off. */
export function annotateSpan(attributes: Attributes): void {
  if (!tracer) return;
  trace.getSpan(context.active())?.setAttributes(attributes);
}

/** What a failed span records: a refusal's reason when the error has one, else the error's name. */
function failSpan(span: Span, error: unknown): void {
  const reason = (error as { reason?: unknown } | null)?.reason;
  span.setStatus({
    code: SpanStatusCode.ERROR,
    message: typeof reason === 'string' ? reason : error instanceof Error ? error.name : 'error',
  });
  if (typeof reason === 'string') span.setAttribute('pkgreg.reject_reason', reason);
}

async function runSpan<T>(span: Span, ctx: Context, fn: () => Promise<T>): Promise<T> {
  try {
    return await context.with(trace.setSpan(ctx, span), fn);
  } catch (error) {
    failSpan(span, error);
    throw error;
  } finally {
    span.end();
  }
}

/** Runs `fn` in a child span of the active one (the edge's admission); just `fn()` when tracing is off. */
export function inSpan<T>(name: string, fn: () => Promise<T>): Promise<T> {
  if (!tracer) return fn();
  return runSpan(tracer.startSpan(name), context.active(), fn);
}

/**
 * Runs a job in a consumer span whose parent is the context its enqueuer put in the job data
 * (`carrier`), so a request, its job and the worker's run are one trace; a job enqueued outside any
 * trace starts a trace of its own. Just `fn()` when tracing is off.
 */
export function inJobSpan<T>(
  job: { name: string; queue: string; id?: string | undefined; attempt: number },
  carrier: unknown,
  fn: () => Promise<T>,
): Promise<T> {
  if (!tracer) return fn();
  const parent = extractTraceContext(carrier);
  const span = tracer.startSpan(
    `job ${job.name}`,
    {
      kind: SpanKind.CONSUMER,
      attributes: {
        'messaging.system': 'bullmq',
        'messaging.operation.type': 'process',
        'messaging.destination.name': job.queue,
        'pkgreg.job.name': job.name,
        'pkgreg.job.attempt': job.attempt,
        ...(job.id ? { 'messaging.message.id': job.id } : {}),
      },
    },
    parent,
  );
  return runSpan(span, parent, fn);
}

/**
 * What traceLogFields returns when there is nothing to add: one shared object, so a log line costs no
 * allocation while tracing is off. Frozen: the logger's merge strategy must pass it by (logger.ts).
 */
export const NO_TRACE_FIELDS: Readonly<{ trace_id?: string; span_id?: string }> = Object.freeze({});

/**
 * The active span's ids for a log line (the pino mixin in logger.ts), so logs and traces join on
 * trace_id. NO_TRACE_FIELDS while tracing is off or outside any span.
 */
export function traceLogFields(): Readonly<{ trace_id?: string; span_id?: string }> {
  if (!tracer) return NO_TRACE_FIELDS;
  const span = trace.getSpan(context.active());
  if (!span) return NO_TRACE_FIELDS;
  const { traceId, spanId } = span.spanContext();
  return { trace_id: traceId, span_id: spanId };
}
