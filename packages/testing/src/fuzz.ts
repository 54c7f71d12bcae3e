import { once } from 'node:events';
import { Agent, request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { connect, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import fc from 'fast-check';

// Shared pieces of the fault suite's fuzz tests (apps/*/test/fuzz*.test.ts): hostile values, values
// shaped by a JSON Schema (valid-ish: mostly following it, sometimes broken in one place), a raw HTTP
// client that sends paths exactly as given, and a log capture to check that no secret was logged.

/** The fault suite's size: unset is the bounded form `pnpm test` runs; `full` the large one of `pnpm test:faults`. */
export function faultsMode(): 'bounded' | 'full' {
  return process.env.PKGREG_FAULTS === 'full' ? 'full' : 'bounded';
}

/** numRuns for one property: `bounded` in the default run, `full` under PKGREG_FAULTS=full. */
export function fuzzRuns(bounded: number, full: number = bounded * 25): number {
  return faultsMode() === 'full' ? full : bounded;
}

/** Strings that broke parsers, routers, SQL, path joins and logs somewhere before. */
export const HOSTILE_STRINGS: readonly string[] = [
  '',
  ' ',
  '\u0000',
  'a\u0000b',
  '\ud800',
  '\udfff',
  '\u202e',
  '\ufeff',
  '\u00a0',
  '🦄',
  'Ω≈ç√',
  'İı',
  'ß',
  '..',
  '../',
  '../../../../etc/passwd',
  '..\\..\\windows\\win.ini',
  '%2e%2e',
  '%2e%2e%2f',
  '..%2f..%2f',
  '%252e%252e%252f',
  '%c0%ae%c0%ae/',
  '....//',
  '/etc/passwd',
  '\\',
  '.',
  './',
  '//',
  '%',
  '%%',
  '%zz',
  '%00',
  '%0a',
  '%0d%0a',
  // Percent-escapes of bytes that are not UTF-8: a surrogate, an overlong NUL, 0xFF, past U+10FFFF.
  '%ED%A0%80',
  '%C0%80',
  '%FF',
  '%F4%90%80%80',
  '\r\n',
  "' OR '1'='1",
  '"; DROP TABLE packages; --',
  '__proto__',
  'constructor',
  'prototype',
  // biome-ignore lint/suspicious/noTemplateCurlyInString: a log4shell probe, meant literally
  '${jndi:ldap://x}',
  '{{7*7}}',
  '<script>alert(1)</script>',
  'null',
  'undefined',
  'NaN',
  'Infinity',
  '-0',
  '1e309',
  '9'.repeat(400),
  '0x1F',
  'true',
  '[]',
  '{}',
  '@',
  '@/',
  '@@',
  '*',
  '?',
  '#',
  '&',
  '=',
];

/** A hostile string: a known bad one, random code points (lone surrogates included), or a very long one. */
export function hostileString(): fc.Arbitrary<string> {
  const known = fc.constantFrom(...HOSTILE_STRINGS);
  return fc.oneof(
    { weight: 4, arbitrary: known },
    { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 24 }) },
    { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 24 }) },
    { weight: 2, arbitrary: fc.tuple(known, fc.string({ maxLength: 8 }), known).map((p) => p.join('')) },
    {
      weight: 1,
      arbitrary: fc
        .tuple(fc.constantFrom('a', '../', '%', '🦄', '\u0000', 'é'), fc.integer({ min: 200, max: 6_000 }))
        .map(([s, n]) => s.repeat(n)),
    },
  );
}

/** Nested arrays `depth` deep: deep enough to exhaust a recursive validator or serializer. */
export const deepArray = (depth: number): unknown => JSON.parse(`${'['.repeat(depth)}${']'.repeat(depth)}`);

/** Any JSON value, hostile ones weighted in: numbers at the edges, deep nesting, `__proto__` keys. */
export function hostileJson(): fc.Arbitrary<unknown> {
  return fc.oneof(
    { weight: 3, arbitrary: hostileString() },
    { weight: 3, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
    {
      weight: 2,
      arbitrary: fc.constantFrom<unknown>(
        null,
        true,
        false,
        0,
        -1,
        0.5,
        2 ** 53 + 2,
        -(2 ** 63),
        1e308,
        -1e308,
        [],
        {},
        JSON.parse('{"__proto__":{"polluted":true}}'),
        { constructor: { prototype: { polluted: true } } },
      ),
    },
    { weight: 1, arbitrary: fc.integer({ min: 10, max: 1500 }).map(deepArray) },
    { weight: 1, arbitrary: fc.array(fc.constant('x'), { minLength: 1000, maxLength: 5000 }) },
  );
}

/** The subset of JSON Schema (2020-12) our contracts' schemas use. */
export interface JsonSchema {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean | JsonSchema;
  items?: JsonSchema;
  enum?: unknown[];
  const?: unknown;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  allOf?: JsonSchema[];
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  pattern?: string;
  format?: string;
  default?: unknown;
  $ref?: string;
}

export interface SchemaOptions {
  /** `#/...` references resolve here (an OpenAPI document, or a schema's `$defs` root). */
  root?: unknown;
  /** Values some properties should usually take (e.g. the caller's own namespace), by property name. */
  known?: Record<string, fc.Arbitrary<unknown>>;
}

function resolveRef(ref: string, root: unknown): JsonSchema {
  let at: unknown = root;
  for (const part of ref.replace(/^#\//, '').split('/')) at = (at as Record<string, unknown>)?.[part];
  return (at ?? {}) as JsonSchema;
}

function stringFrom(schema: JsonSchema): fc.Arbitrary<string> {
  const minLength = schema.minLength ?? 0;
  const maxLength = Math.min(schema.maxLength ?? 40, minLength + 60);
  switch (schema.format) {
    case 'uuid':
      return fc.uuid();
    case 'date-time':
      return fc
        .date({ min: new Date('2000-01-01'), max: new Date('2100-01-01'), noInvalidDate: true })
        .map((d) => d.toISOString());
    case 'uri':
      return fc.webUrl();
  }
  if (schema.pattern) {
    const within = (s: string) => s.length >= minLength && s.length <= (schema.maxLength ?? Infinity);
    try {
      return fc.stringMatching(new RegExp(schema.pattern)).filter(within);
    } catch {
      // A pattern JavaScript cannot compile: any string, the server decides.
    }
  }
  return fc.string({ minLength, maxLength });
}

/** Values that follow `schema` (as far as this subset goes). */
export function fromSchema(
  schema: JsonSchema,
  options: SchemaOptions = {},
  depth = 0,
): fc.Arbitrary<unknown> {
  if (schema.$ref) return fromSchema(resolveRef(schema.$ref, options.root), options, depth);
  if (schema.const !== undefined) return fc.constant(schema.const);
  if (schema.enum) return fc.constantFrom(...schema.enum);
  const alternatives = schema.anyOf ?? schema.oneOf;
  if (alternatives?.length) return fc.oneof(...alternatives.map((s) => fromSchema(s, options, depth)));
  if (schema.allOf?.length) return fromSchema(Object.assign({}, ...schema.allOf), options, depth);
  const types = Array.isArray(schema.type) ? schema.type : schema.type ? [schema.type] : [];
  if (types.length > 1)
    return fc.oneof(...types.map((type) => fromSchema({ ...schema, type }, options, depth)));
  switch (types[0]) {
    case 'string':
      return stringFrom(schema);
    case 'integer': {
      const min =
        schema.minimum ?? (schema.exclusiveMinimum === undefined ? -1000 : schema.exclusiveMinimum + 1);
      const max =
        schema.maximum ?? (schema.exclusiveMaximum === undefined ? min + 2000 : schema.exclusiveMaximum - 1);
      return fc.integer({ min: Math.max(min, -(2 ** 31)), max: Math.min(max, 2 ** 31) });
    }
    case 'number':
      return fc.double({
        noNaN: true,
        noDefaultInfinity: true,
        min: schema.minimum ?? schema.exclusiveMinimum ?? -1e6,
        max: schema.maximum ?? schema.exclusiveMaximum ?? 1e6,
      });
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    case 'array':
      return depth > 4
        ? fc.constant([])
        : fc.array(fromSchema(schema.items ?? {}, options, depth + 1), {
            minLength: schema.minItems ?? 0,
            maxLength: Math.min(schema.maxItems ?? 4, (schema.minItems ?? 0) + 4),
          });
    case 'object': {
      if (depth > 4) return fc.constant({});
      const properties = schema.properties ?? {};
      const record = fc.record(
        Object.fromEntries(
          Object.entries(properties).map(([name, property]) => [
            name,
            options.known?.[name]
              ? fc.oneof(
                  { weight: 4, arbitrary: options.known[name] },
                  fromSchema(property, options, depth + 1),
                )
              : fromSchema(property, options, depth + 1),
          ]),
        ),
        { requiredKeys: (schema.required ?? []).filter((k) => k in properties) },
      );
      if (typeof schema.additionalProperties !== 'object' || Object.keys(properties).length) return record;
      return fc.dictionary(
        fc.string({ minLength: 1, maxLength: 12 }),
        fromSchema(schema.additionalProperties, options, depth + 1),
        { maxKeys: 4 },
      );
    }
    default:
      return fc.jsonValue({ maxDepth: 2 });
  }
}

/** `value` broken in one place: a property replaced by a hostile value, removed, or one added. */
function mutate(value: unknown): fc.Arbitrary<unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return hostileJson();
  const keys = Object.keys(value);
  return fc
    .tuple(fc.nat(), fc.constantFrom('replace', 'remove', 'add', 'nested'), hostileJson(), hostileString())
    .chain(([n, how, bad, name]) => {
      const copy: Record<string, unknown> = { ...(value as Record<string, unknown>) };
      const key = keys.length ? (keys[n % keys.length] as string) : undefined;
      if (how === 'add' || key === undefined) {
        copy[name || 'extra'] = bad;
        return fc.constant(copy);
      }
      if (how === 'remove') {
        delete copy[key];
        return fc.constant(copy);
      }
      if (how === 'nested') return mutate(copy[key]).map((inner) => ({ ...copy, [key]: inner }));
      copy[key] = bad;
      return fc.constant(copy);
    });
}

/** Mostly schema-shaped values, some broken in one place, some anything at all. */
export function validish(schema: JsonSchema, options: SchemaOptions = {}): fc.Arbitrary<unknown> {
  const valid = fromSchema(schema, options);
  return fc.oneof(
    { weight: 4, arbitrary: valid },
    { weight: 3, arbitrary: valid.chain(mutate) },
    { weight: 1, arbitrary: hostileJson() },
  );
}

/** A header value Node will send: characters it refuses (control characters, above U+00FF) dropped. */
export const headerSafe = (value: string): string => value.replace(/[^\t\x20-\x7e\x80-\xff]/g, '');

export interface RawResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
  text: string;
}

export interface RawRequest {
  method: string;
  /** Sent as it is: no normalization of `..`, no re-encoding (it must be printable ASCII). */
  path: string;
  headers?: Record<string, string | string[]>;
  body?: string | Buffer;
}

/** One HTTP exchange with a server on 127.0.0.1:`port`, over `agent`. */
export function sendRaw(port: number, req: RawRequest, agent?: Agent): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    // Node frames a GET's or DELETE's body only when told its length (it sends no chunked encoding for them).
    const headers = { ...req.headers };
    if (
      req.body !== undefined &&
      !Object.keys(headers).some((h) => /^(content-length|transfer-encoding)$/i.test(h))
    ) {
      headers['content-length'] = String(Buffer.byteLength(req.body));
    }
    const outgoing = httpRequest(
      // Without an agent: a connection of its own (the global agent could hand over one the server closed).
      { host: '127.0.0.1', port, method: req.method, path: req.path, headers, agent: agent ?? false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const body = Buffer.concat(chunks);
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body, text: body.toString('utf8') });
        });
        res.on('error', reject);
      },
    );
    outgoing.on('error', reject);
    outgoing.end(req.body);
  });
}

/** A keep-alive agent for a fuzz run's many requests (one socket reused instead of one per request). */
export const fuzzAgent = (): Agent => new Agent({ keepAlive: true, maxSockets: 4 });

/** A raw TCP client: what it sent, what came back, and when the server closed the connection. */
export interface RawSocket {
  socket: Socket;
  /** Everything the server has sent so far. */
  received(): string;
  /** Resolves when the server ends or resets the connection. */
  closed: Promise<void>;
  isClosed(): boolean;
  /** Writes `text` a piece at a time, `everyMs` apart, until done or the connection is closed. */
  dribble(pieces: readonly string[], everyMs: number): Promise<'sent' | 'cut off'>;
}

export async function openRawSocket(port: number): Promise<RawSocket> {
  const socket = connect({ host: '127.0.0.1', port });
  await once(socket, 'connect');
  const chunks: Buffer[] = [];
  let closed = false;
  socket.on('data', (chunk: Buffer) => chunks.push(chunk));
  // A reset after the server gave up on us is the expected end, not a failure of the test.
  socket.on('error', () => {});
  const closedPromise = new Promise<void>((resolve) =>
    socket.once('close', () => {
      closed = true;
      resolve();
    }),
  );
  return {
    socket,
    received: () => Buffer.concat(chunks).toString('utf8'),
    closed: closedPromise,
    isClosed: () => closed,
    async dribble(pieces, everyMs) {
      for (const piece of pieces) {
        if (closed || socket.destroyed) return 'cut off';
        socket.write(piece);
        await sleep(everyMs);
      }
      return closed ? 'cut off' : 'sent';
    },
  };
}

/** Status and body of the first HTTP response in `raw` (what a RawSocket received). */
export function parseRawResponse(raw: string): { status: number; headers: string; body: string } | undefined {
  const match = /^HTTP\/1\.1 (\d{3})[^\r\n]*\r\n([\s\S]*?)\r\n\r\n([\s\S]*)$/.exec(raw);
  if (!match) return undefined;
  const headers = match[2] as string;
  const length = /content-length:\s*(\d+)/i.exec(headers)?.[1];
  let body = match[3] as string;
  if (/transfer-encoding:\s*chunked/i.test(headers)) {
    let rest = body;
    body = '';
    for (let size = Number.parseInt(rest, 16); size > 0; size = Number.parseInt(rest, 16)) {
      const start = rest.indexOf('\r\n') + 2;
      body += rest.slice(start, start + size);
      rest = rest.slice(start + size + 2);
    }
  }
  return {
    status: Number(match[1]),
    headers,
    body: length === undefined ? body : body.slice(0, Number(length)),
  };
}
