import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';

// A local OTLP/HTTP receiver for traces, as an OpenTelemetry Collector serves it: POST /v1/traces with an
// ExportTraceServiceRequest in the JSON encoding (what @opentelemetry/exporter-trace-otlp-http sends),
// answered 200 with an empty ExportTraceServiceResponse. It keeps every span it is sent, flattened with
// its resource's service.name, so a test can check that spans of several processes form one trace.
// Protobuf bodies are refused with 415 (the exporters we use speak JSON).

export type AttributeValue = string | number | boolean | null | AttributeValue[];

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  /** Undefined for a trace's root span. */
  parentSpanId: string | undefined;
  name: string;
  /** OTLP SpanKind: 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  kind: number;
  /** The resource's service.name. */
  service: string;
  attributes: Record<string, AttributeValue>;
  /** OTLP status code: 0 unset, 1 ok, 2 error. */
  status: { code: number; message?: string };
}

export interface OtlpReceiver {
  /** Base URL, as OTEL_EXPORTER_OTLP_ENDPOINT takes it (`/v1/traces` is appended by the SDK). */
  readonly url: string;
  /** The traces URL, as OTEL_EXPORTER_OTLP_TRACES_ENDPOINT takes it. */
  readonly tracesUrl: string;
  readonly spans: ReceivedSpan[];
  /** Export requests received (any path, any encoding). */
  readonly requests: number;
  /** Resolves with the spans once `predicate` holds for them; rejects after `timeoutMs`. */
  waitFor(predicate: (spans: ReceivedSpan[]) => boolean, timeoutMs?: number): Promise<ReceivedSpan[]>;
  close(): Promise<void>;
}

interface OtlpKeyValue {
  key: string;
  value?: OtlpAnyValue;
}
interface OtlpAnyValue {
  stringValue?: string;
  boolValue?: boolean;
  intValue?: number | string;
  doubleValue?: number;
  arrayValue?: { values?: OtlpAnyValue[] };
}
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind?: number;
  attributes?: OtlpKeyValue[];
  status?: { code?: number; message?: string };
}
interface ExportTraceServiceRequest {
  resourceSpans?: {
    resource?: { attributes?: OtlpKeyValue[] };
    scopeSpans?: { spans?: OtlpSpan[] }[];
  }[];
}

function anyValue(value: OtlpAnyValue | undefined): AttributeValue {
  if (!value) return null;
  if (value.stringValue !== undefined) return value.stringValue;
  if (value.boolValue !== undefined) return value.boolValue;
  if (value.intValue !== undefined) return Number(value.intValue);
  if (value.doubleValue !== undefined) return value.doubleValue;
  if (value.arrayValue) return (value.arrayValue.values ?? []).map(anyValue);
  return null;
}

function attributesOf(list: OtlpKeyValue[] | undefined): Record<string, AttributeValue> {
  return Object.fromEntries((list ?? []).map((kv) => [kv.key, anyValue(kv.value)]));
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const body = Buffer.concat(chunks);
  return req.headers['content-encoding'] === 'gzip' ? gunzipSync(body) : body;
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  let requests = 0;
  const waiters = new Set<() => void>();

  const accept = (request: ExportTraceServiceRequest) => {
    for (const resourceSpans of request.resourceSpans ?? []) {
      const service = String(attributesOf(resourceSpans.resource?.attributes)['service.name'] ?? '');
      for (const scope of resourceSpans.scopeSpans ?? []) {
        for (const span of scope.spans ?? []) {
          spans.push({
            traceId: span.traceId,
            spanId: span.spanId,
            parentSpanId: span.parentSpanId ? span.parentSpanId : undefined,
            name: span.name,
            kind: span.kind ?? 0,
            service,
            attributes: attributesOf(span.attributes),
            status: {
              code: span.status?.code ?? 0,
              ...(span.status?.message ? { message: span.status.message } : {}),
            },
          });
        }
      }
    }
    for (const wake of waiters) wake();
  };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    requests += 1;
    const body = await readBody(req);
    if (req.method !== 'POST' || req.url !== '/v1/traces') {
      res.writeHead(404).end();
      return;
    }
    if (!/^application\/json\b/.test(req.headers['content-type'] ?? '')) {
      res.writeHead(415, { 'Content-Type': 'text/plain' }).end('this receiver speaks OTLP/HTTP JSON only');
      return;
    }
    let parsed: ExportTraceServiceRequest;
    try {
      parsed = JSON.parse(body.toString('utf8')) as ExportTraceServiceRequest;
    } catch {
      res.writeHead(400, { 'Content-Type': 'text/plain' }).end('body is not JSON');
      return;
    }
    accept(parsed);
    res.writeHead(200, { 'Content-Type': 'application/json' }).end('{}');
  };

  const server = createServer((req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent) res.writeHead(500).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    url,
    tracesUrl: `${url}/v1/traces`,
    spans,
    get requests() {
      return requests;
    },
    waitFor(predicate, timeoutMs = 10_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          if (!predicate(spans)) return;
          cleanup();
          resolve(spans);
        };
        const timer = setTimeout(() => {
          cleanup();
          reject(new Error(`spans not received in ${timeoutMs} ms (have ${spans.length})`));
        }, timeoutMs);
        const cleanup = () => {
          clearTimeout(timer);
          waiters.delete(check);
        };
        waiters.add(check);
        check();
      });
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
