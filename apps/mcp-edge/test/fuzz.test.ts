import { randomUUID } from 'node:crypto';
import type { Agent, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ALL_SCOPES, ERROR_WIRE_FORMS, type ErrorReason, SCOPES } from '@pkgreg/contracts';
import { createTestDatabase, type TestDatabase } from '@pkgreg/db/testing';
import { closeServer, createLogger, listen } from '@pkgreg/server-kit';
import {
  captureLogs,
  fuzzAgent,
  fuzzRuns,
  hostileJson,
  hostileString,
  type JsonSchema,
  type RawResponse,
  sendRaw,
  validish,
} from '@pkgreg/testing';
import fc from 'fast-check';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rpcClientErrorBody } from '../src/mcp/transport.js';
import { TOOL_SPECS } from '../src/tools/tool-catalog.js';
import { clientWithToken, HOST, type TestClient, useHarness } from './helpers.js';
import { type RunningRegistry, startRegistry } from './registry.js';

// The fault suite's hostile input for the edge (issue 22, "Trust it"): every JSON-RPC method, and every
// tool tools/list shows a token holding every scope (so a new tool is fuzzed as soon as it is listed)
// with arguments shaped by its inputSchema, broken in one place or hostile; batches, notifications,
// wrong versions, huge ids and hostile transport headers. Properties: never a 5xx; every refusal is a
// JSON-RPC error whose code is its reason's (ERROR_WIRE_FORMS) with data.reason and data.requestId, on
// that reason's HTTP status; a refused call writes no row; no token, client secret or memory content in
// the logs. PKGREG_FAULTS=full (pnpm test:faults) runs many more cases.

const logs = captureLogs();
const overrides: Record<string, string> = {
  // Limits are exercised by their own tests: here every call should reach its checks.
  EDGE_RATE_LIMIT_PER_MINUTE: '1000000',
  EDGE_INVOKE_PER_MINUTE: '1000000',
  EDGE_COMPACT_PER_MINUTE: '1000000',
  EDGE_TOKEN_REQUESTS_PER_MINUTE: '1000000',
  EDGE_SYNC_THRESHOLD_MS: '50',
  EDGE_CATALOG_TTL_MS: '1',
};
let registryDb: TestDatabase;
let registry: RunningRegistry;
beforeAll(async () => {
  registryDb = await createTestDatabase();
  registry = await startRegistry(registryDb.url);
  overrides.REGISTRY_URL = registry.url;
});

const h = useHarness(overrides, { logger: createLogger('edge-fuzz', 'debug', logs.destination) });

/** Secrets and memory contents the run used; none may be logged. */
const secrets = new Set<string>();
let full: TestClient;
let narrow: TestClient;
/** Properties draw a caller by name, so a counterexample never prints a token or client secret. */
type Caller = 'full' | 'narrow';
const clientOf = (caller: Caller): TestClient => (caller === 'full' ? full : narrow);
let server: Server;
let port: number;
let agent: Agent;
/** tools/list as a token holding every scope sees it. */
let listed: { name: string; inputSchema: JsonSchema }[] = [];

beforeAll(async () => {
  full = await clientWithToken(h);
  narrow = await clientWithToken(h, [SCOPES.systemRead]);
  for (const c of [full, narrow]) secrets.add(c.token).add(c.clientSecret);
  server = await listen(h.edge.handler, 0, '127.0.0.1', undefined, rpcClientErrorBody);
  port = (server.address() as AddressInfo).port;
  agent = fuzzAgent();
  const res = await post(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }), {
    authorization: `Bearer ${full.token}`,
  });
  listed = (JSON.parse(res.text) as { result: { tools: typeof listed } }).result.tools;
});

afterAll(async () => {
  agent?.destroy();
  if (server) await closeServer(server);
  await registry?.stop();
  await registryDb?.destroy();
});

// --- requests ----------------------------------------------------------------------------------------

const STANDARD_HEADERS = {
  host: HOST,
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
  'mcp-protocol-version': '2025-11-25',
};

function post(body: string, headers: Record<string, string>): Promise<RawResponse> {
  for (const m of body.matchAll(/mem-[0-9a-f-]{36}/g)) secrets.add(m[0]);
  for (const value of Object.values(headers)) {
    const token = /zq-[0-9a-f-]{36}/.exec(value)?.[0];
    if (token) secrets.add(token);
  }
  return sendRaw(
    port,
    { method: 'POST', path: '/mcp', headers: { ...STANDARD_HEADERS, ...headers }, body },
    agent,
  );
}

/** Memory contents and invoke texts carry a marker, so the log check can look for them. */
const marked = fc.uuid().map((u) => `mem-${u}`);

/** JSON-RPC ids: ordinary, at the edges of what JSON numbers hold, and not ids at all. */
const rpcId = fc.oneof(
  { weight: 4, arbitrary: fc.integer() },
  { weight: 2, arbitrary: fc.string({ maxLength: 40 }) },
  {
    weight: 1,
    arbitrary: fc.constantFrom<unknown>(2 ** 53 + 1, -(2 ** 63), 1.5, null, true, {}, [1], 'x'.repeat(5000)),
  },
);

/** A request's JSON text; `hugeId` puts a number JSON can carry but JavaScript cannot hold exactly. */
function envelope(id: unknown, method: string, params: unknown, hugeId: string | null): string {
  const text = JSON.stringify({ jsonrpc: '2.0', id, method, params });
  return hugeId === null ? text : text.replace(/"id":(?:[^,]*),"method"/, `"id":${hugeId},"method"`);
}
const hugeIds = fc.option(
  fc.constantFrom('123456789012345678901234567890', '1e400', '-1e400', '1.0e2', '0.0'),
  {
    freq: 6,
  },
);

function toolArguments(
  tool: { name: string; inputSchema: JsonSchema },
  client: TestClient,
): fc.Arbitrary<unknown> {
  return validish(tool.inputSchema, {
    known: {
      namespace: fc.oneof(
        { weight: 5, arbitrary: fc.constant(client.namespace) },
        fc.constant(narrow.namespace),
      ),
      agentId: fc.constantFrom('engineering.workflow', 'engineering.workflow ', 'nope'),
      content: marked,
      text: marked,
      tier: fc.constantFrom('stm', 'ltm'),
      strategy: fc.constantFrom('summarize', 'extract_facts'),
      executionMode: fc.constantFrom('async', 'sync'),
      name: fc.constantFrom('@acme/pdf', '@acme/none', 'acme/pdf'),
      id: fc.uuid(),
      entryId: fc.uuid(),
    },
  });
}

// --- checks ------------------------------------------------------------------------------------------

const REASONS = new Set(Object.keys(ERROR_WIRE_FORMS));
/**
 * Reasons whose HTTP status the transport chooses: body too large, content type, accept, and what Node's
 * parser refuses before the edge (headers over 16 KiB, too slow; server-kit listen.ts).
 */
const TRANSPORT_STATUSES: Partial<Record<ErrorReason, number[]>> = {
  invalid_request: [400, 408, 413, 431],
  transport_invalid: [400, 406, 415],
  // MCP 2026-07-28: a malformed envelope is 400, a method the revision lacks 404 (docs/decisions.md).
  request_schema_invalid: [200, 400],
  method_not_found: [200, 404],
};

interface Answer {
  status: number;
  body: {
    jsonrpc?: string;
    id?: unknown;
    result?: unknown;
    error?: { code: number; message: string; data?: Record<string, unknown> };
  } | null;
}

/** What is wrong with an answer to `sentId` (undefined: a notification), or undefined when nothing is. */
function problemOf(res: RawResponse, sentId: unknown): string | undefined {
  if (res.status >= 500) return `status ${res.status}`;
  if (res.status === 202) return res.text === '' ? undefined : '202 with a body';
  let body: Answer['body'];
  try {
    body = JSON.parse(res.text);
  } catch {
    return `not JSON: ${res.text.slice(0, 200)}`;
  }
  if (body?.jsonrpc !== '2.0') return `not a JSON-RPC response: ${res.text.slice(0, 200)}`;
  if (!res.headers['x-request-id']) return 'no X-Request-Id';
  if (body.error) {
    const reason = body.error.data?.reason as ErrorReason | undefined;
    if (!reason || !REASONS.has(reason)) return `undocumented reason ${String(reason)}`;
    const form = ERROR_WIRE_FORMS[reason];
    if (body.error.code !== form.code) return `code ${body.error.code} for ${reason}`;
    if (typeof body.error.message !== 'string' || !body.error.message) return 'no message';
    if (typeof body.error.data?.requestId !== 'string') return 'no data.requestId';
    const statuses = TRANSPORT_STATUSES[reason] ?? [form.httpStatus];
    if (!statuses.includes(res.status)) return `HTTP ${res.status} for ${reason}`;
    if (res.status === 401 && !res.headers['www-authenticate']) return '401 without WWW-Authenticate';
    if (res.status === 429 && !res.headers['retry-after']) return '429 without Retry-After';
    // The id is echoed when the request had a valid one, else null.
    if (body.id !== null && body.id !== sentId)
      return `id ${JSON.stringify(body.id)} for ${JSON.stringify(sentId)}`;
    return undefined;
  }
  if (res.status !== 200) return `HTTP ${res.status} with a result`;
  if (!('result' in body)) return 'neither result nor error';
  if (body.id !== sentId) return `id ${JSON.stringify(body.id)} for ${JSON.stringify(sentId)}`;
  return undefined;
}

/** Rows a refused call must not have written (the audit table records every request by design). */
async function snapshot(): Promise<string> {
  const { rows } = await sql<Record<string, unknown>>`
    select (select count(*) from memory_entries) as memory,
           (select count(*) from memory_entries where superseded_by_entry_id is not null) as superseded,
           (select count(*) from memory_entries where deleted_at is not null) as deleted,
           (select count(*) from idempotency_records) as idempotency,
           (select count(*) from tasks) as tasks`.execute(h.t.db);
  return JSON.stringify(rows[0]);
}

const cut = (s: string) => (s.length > 400 ? `${s.slice(0, 400)}…(${s.length})` : s);
/** The sent id as the edge reads it back (JSON.parse of the text sent). */
const parsedId = (body: string): unknown => {
  try {
    return (JSON.parse(body) as { id?: unknown }).id;
  } catch {
    return undefined;
  }
};

const TEST_TIMEOUT_MS = fuzzRuns(120_000, 1_800_000);
const reached = new Map<string, number>();

describe('edge fuzz: every tool tools/list shows', () => {
  it('lists every tool of the catalog to a token holding every scope', () => {
    expect(listed.map((t) => t.name).sort()).toEqual(TOOL_SPECS.map((t) => t.name).sort());
    expect(ALL_SCOPES.length).toBeGreaterThan(5);
  });

  for (const spec of TOOL_SPECS) {
    it(
      `${spec.name}: schema-shaped, broken and hostile arguments; no 5xx, documented refusals, no half-written rows`,
      async () => {
        const tool = listed.find((t) => t.name === spec.name);
        if (!tool) throw new Error(`${spec.name} is not in tools/list`);
        let admitted = 0;
        const calls = fc
          .tuple(fc.constantFrom<Caller>('full', 'full', 'full', 'narrow'), rpcId)
          .chain(([caller, id]) =>
            toolArguments(tool, clientOf(caller)).map((args) => ({ caller, id, args })),
          );
        await fc.assert(
          fc.asyncProperty(calls, async ({ caller, id, args }) => {
            const client = clientOf(caller);
            const body = envelope(id, 'tools/call', { name: spec.name, arguments: args }, null);
            const before = await snapshot();
            const res = await post(body, { authorization: `Bearer ${client.token}` });
            const problem = problemOf(res, parsedId(body));
            if (problem) throw new Error(`${problem}: ${res.status} ${cut(res.text)} for ${cut(body)}`);
            const answer = JSON.parse(res.text) as Answer['body'];
            if (answer?.error) {
              const after = await snapshot();
              if (after !== before) {
                throw new Error(`refused (${answer.error.data?.reason}) but rows changed: ${cut(body)}`);
              }
            }
            // Past the schema: the tool itself answered (a result, or a refusal of its own).
            if (!answer?.error?.message.startsWith('invalid arguments')) admitted += 1;
          }),
          { numRuns: fuzzRuns(30) },
        );
        reached.set(spec.name, admitted);
      },
      TEST_TIMEOUT_MS,
    );
  }

  it('got past the schema with some call of every tool (the generated arguments reach the tool)', () => {
    for (const spec of TOOL_SPECS) expect(reached.get(spec.name), spec.name).toBeGreaterThan(0);
  });
});

const METHODS = [
  'initialize',
  'ping',
  'tools/list',
  'tools/call',
  'tasks/get',
  'tasks/result',
  'resources/list',
  'resources/templates/list',
  'resources/read',
  'resources/directory/read',
  'skills/list',
  'skills/get',
  'notifications/initialized',
  'notifications/cancelled',
];

const paramsFor = (method: string): fc.Arbitrary<unknown> => {
  const shaped: Record<string, JsonSchema> = {
    initialize: {
      type: 'object',
      properties: {
        protocolVersion: { enum: ['2025-11-25', '2025-06-18', '1999-01-01'] },
        clientInfo: { type: 'object', properties: { name: { type: 'string' }, version: { type: 'string' } } },
        capabilities: { type: 'object' },
      },
      required: ['protocolVersion', 'clientInfo'],
    },
    'tasks/get': {
      type: 'object',
      properties: { taskId: { type: 'string', format: 'uuid' } },
      required: ['taskId'],
    },
    'tasks/result': {
      type: 'object',
      properties: { taskId: { type: 'string', format: 'uuid' } },
      required: ['taskId'],
    },
    'resources/read': {
      type: 'object',
      properties: {
        uri: {
          enum: [
            'skill://@acme/pdf/SKILL.md',
            'skill://@acme/pdf/_manifest',
            'skill://acme/pdf/SKILL.md',
            'skill://acme/1.0.0/pdf/references/x.md',
            'skill://..',
            'file:///etc/passwd',
          ],
        },
      },
      required: ['uri'],
    },
    'skills/get': {
      type: 'object',
      properties: {
        uri: { enum: ['skill://acme/pdf/SKILL.md', 'skill://acme/1.0.0/pdf/SKILL.md', 'skill://acme'] },
        _meta: {
          type: 'object',
          properties: { 'io.modelcontextprotocol.skills/includeHighRisk': { type: 'boolean' } },
        },
      },
      required: ['uri'],
    },
    'resources/directory/read': {
      type: 'object',
      properties: {
        uri: { enum: ['skill://acme/pdf', 'skill://acme/pdf/references', 'skill://acme/pdf/'] },
        cursor: { type: 'string' },
      },
      required: ['uri'],
    },
    'skills/list': { type: 'object', properties: { cursor: { type: 'string' } } },
    'resources/list': { type: 'object', properties: { cursor: { type: 'string' } } },
    'tools/call': {
      type: 'object',
      properties: { name: { type: 'string' }, arguments: { type: 'object' } },
      required: ['name'],
    },
  };
  return validish(shaped[method] ?? { type: 'object' });
};

describe('edge fuzz: every JSON-RPC method, envelope and header', () => {
  it(
    'answers any method with any params and id: no 5xx, documented refusals',
    async () => {
      const messages = fc
        .tuple(
          fc.oneof({ weight: 5, arbitrary: fc.constantFrom(...METHODS) }, hostileString()),
          fc.constantFrom<Caller>('full', 'narrow'),
          rpcId,
          hugeIds,
          fc.boolean(),
        )
        .chain(([method, caller, id, hugeId, notification]) =>
          paramsFor(method).map((params) => ({ method, caller, id, hugeId, notification, params })),
        );
      await fc.assert(
        fc.asyncProperty(messages, async ({ method, caller, id, hugeId, notification, params }) => {
          const client = clientOf(caller);
          const body = notification
            ? JSON.stringify({ jsonrpc: '2.0', method, params })
            : envelope(id, method, params, hugeId);
          const res = await post(body, { authorization: `Bearer ${client.token}` });
          const problem = problemOf(res, notification ? undefined : parsedId(body));
          if (problem) throw new Error(`${problem}: ${res.status} ${cut(res.text)} for ${cut(body)}`);
        }),
        { numRuns: fuzzRuns(200) },
      );
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'answers broken envelopes (batches, wrong versions, not JSON-RPC, not JSON) with documented refusals',
    async () => {
      const request = fc.record({
        jsonrpc: fc.constant('2.0'),
        id: fc.integer(),
        method: fc.constantFrom(...METHODS),
      });
      const bodies = fc.oneof(
        fc.array(request, { minLength: 0, maxLength: 3 }).map((b) => JSON.stringify(b)),
        fc
          .tuple(
            fc.oneof(fc.constantFrom<unknown>('1.0', '2', 2, 2.0, null, '', ' 2.0'), hostileJson()),
            request,
          )
          .map(([jsonrpc, r]) => JSON.stringify({ ...r, jsonrpc })),
        hostileJson().map((v) => JSON.stringify(v) ?? 'null'),
        hostileString(),
        fc.constantFrom(
          '',
          '{',
          '{"jsonrpc":"2.0","id":1,"method":"ping"',
          '\u0000',
          '{"jsonrpc":"2.0","id":1,"result":{}}',
        ),
      );
      await fc.assert(
        fc.asyncProperty(bodies, async (body) => {
          const res = await post(body, { authorization: `Bearer ${full.token}` });
          const problem = problemOf(res, parsedId(body));
          if (problem) throw new Error(`${problem} for ${cut(body)}: ${res.status} ${cut(res.text)}`);
        }),
        { numRuns: fuzzRuns(150) },
      );
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'answers 2026-07-28 requests with any envelope and routing headers: no 5xx, documented refusals',
    async () => {
      const MODERN = '2026-07-28';
      const methods = [...METHODS, 'server/discover', 'tasks/update', 'tasks/cancel'];
      const meta = fc.oneof(
        fc.record({
          'io.modelcontextprotocol/protocolVersion': fc.constantFrom(MODERN, '2027-01-01', '', 7),
          'io.modelcontextprotocol/clientCapabilities': fc.oneof(
            fc.constant({}),
            fc.constant({ extensions: { 'io.modelcontextprotocol/tasks': {} } }),
            hostileJson(),
          ),
          'io.modelcontextprotocol/clientInfo': fc.oneof(
            fc.constant({ name: 'f', version: '1' }),
            hostileJson(),
          ),
        }),
        hostileJson(),
      );
      const hostileHeader = hostileString().map((v) =>
        v.replace(/[^\x20-\x7e\x80-\xff]/g, '').slice(0, 2000),
      );
      const header = (right: string) =>
        fc.oneof(
          fc.constant(right),
          fc.constant(undefined),
          fc.constant(`=?base64?${right}?=`),
          hostileHeader,
        );
      const cases = fc
        .tuple(fc.constantFrom(...methods), meta, fc.constantFrom<Caller>('full', 'narrow'), rpcId)
        .chain(([method, m, caller, id]) =>
          fc
            .tuple(paramsFor(method), header(MODERN), header(method), header('pkgreg.system.v1.info'))
            .map(([params, version, mcpMethod, name]) => ({
              method,
              m,
              caller,
              id,
              params,
              version,
              mcpMethod,
              name,
            })),
        );
      await fc.assert(
        fc.asyncProperty(cases, async ({ method, m, caller, id, params, version, mcpMethod, name }) => {
          const body = JSON.stringify({
            jsonrpc: '2.0',
            id,
            method,
            params: { ...(typeof params === 'object' && params !== null ? params : {}), _meta: m },
          });
          const headers: Record<string, string> = { authorization: `Bearer ${clientOf(caller).token}` };
          if (version !== undefined) headers['mcp-protocol-version'] = version;
          if (mcpMethod !== undefined) headers['mcp-method'] = mcpMethod;
          if (name !== undefined) headers['mcp-name'] = name;
          const res = await post(body, headers);
          const problem = problemOf(res, parsedId(body));
          if (problem) throw new Error(`${problem}: ${res.status} ${cut(res.text)} for ${cut(body)}`);
        }),
        { numRuns: fuzzRuns(150) },
      );
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'answers hostile transport headers (Authorization, Content-Type, Accept, protocol version, Origin, Host)',
    async () => {
      const headerValue = hostileString().map((s) => s.replace(/[^\x20-\x7e\x80-\xff]/g, '').slice(0, 2000));
      const headers = fc.record(
        {
          authorization: fc.oneof(
            fc.constant(`Bearer ${full.token}`),
            fc.uuid().map((u) => `Bearer zq-${u}`),
            fc.uuid().map((u) => `Bearer zq-${u}.zq-${u}.zq-${u}`),
            headerValue,
            headerValue.map((v) => `Bearer ${v}`),
          ),
          'content-type': fc.oneof(
            fc.constantFrom(
              'application/json',
              'text/plain',
              'application/json; charset=utf-16',
              'application/jsonx',
            ),
            headerValue,
          ),
          accept: fc.oneof(
            fc.constantFrom('text/event-stream', 'text/html', '*/*', 'application/*'),
            headerValue,
          ),
          'mcp-protocol-version': fc.oneof(fc.constantFrom('2025-11-25', '2024-01-01', ''), headerValue),
          origin: fc.oneof(
            fc.constantFrom('http://localhost:4100', 'https://evil.example', 'null'),
            headerValue,
          ),
          host: fc.oneof(fc.constantFrom(HOST, 'evil.example', 'localhost:1', '[::1]'), headerValue),
        },
        { requiredKeys: [] },
      );
      await fc.assert(
        fc.asyncProperty(headers, fc.constantFrom(...METHODS), async (chosen, method) => {
          const body = JSON.stringify({ jsonrpc: '2.0', id: 7, method, params: {} });
          const res = await post(body, chosen as Record<string, string>);
          const problem = problemOf(res, 7);
          if (problem)
            throw new Error(`${problem} for ${JSON.stringify(chosen)}: ${res.status} ${cut(res.text)}`);
        }),
        { numRuns: fuzzRuns(150) },
      );
    },
    TEST_TIMEOUT_MS,
  );
});

/** RFC 6749 §5.2's codes the token endpoint answers with, and the authorization endpoint's refusal. */
const OAUTH_ERRORS = new Set([
  'invalid_request',
  'invalid_client',
  'invalid_grant',
  'unauthorized_client',
  'unsupported_grant_type',
  'invalid_scope',
  'invalid_target',
  'unsupported_response_type',
]);

/**
 * Everything but POST /mcp answers `{error, error_description?}`, except what Node's parser refuses
 * before any route (a JSON-RPC invalid_request, decisions.md); what is wrong, or undefined.
 */
function oauthProblemOf(res: RawResponse, method: string): string | undefined {
  if (res.status >= 500) return `status ${res.status}`;
  if (res.status < 400 || method === 'HEAD') return undefined;
  if ([400, 408, 431].includes(res.status) && res.text.startsWith('{"jsonrpc"')) return problemOf(res, null);
  let body: { error?: unknown; error_description?: unknown };
  try {
    body = JSON.parse(res.text);
  } catch {
    return `not JSON: ${cut(res.text)}`;
  }
  if (typeof body.error !== 'string') return `no error: ${cut(res.text)}`;
  if (res.status === 401 && !res.headers['www-authenticate']) return '401 without WWW-Authenticate';
  if (res.status === 429 && !res.headers['retry-after']) return '429 without Retry-After';
  const known = OAUTH_ERRORS.has(body.error) || (res.status === 404 && body.error === 'not_found');
  return known ? undefined : `error ${body.error} on ${res.status}`;
}

describe('edge fuzz: the OAuth endpoints and every other path', () => {
  it(
    'answers token requests with any grant, credentials, resource and scope as RFC 6749 says',
    async () => {
      const form = fc.record(
        {
          grant_type: fc.oneof(
            fc.constantFrom('client_credentials', 'authorization_code', 'password'),
            hostileString(),
          ),
          client_id: fc.oneof(
            fc.constant('__full__'),
            fc.uuid().map((u) => `pkc_${u}`),
            hostileString(),
          ),
          client_secret: fc.oneof(
            fc.constant('__secret__'),
            fc.uuid().map((u) => `zq-${u}`),
            hostileString(),
          ),
          resource: fc.oneof(fc.constant(`${h.env.PKGREG_PUBLIC_BASE_URL}/mcp`), hostileString()),
          scope: fc.oneof(
            fc.constantFrom(SCOPES.systemRead, 'openid', ALL_SCOPES.join(' ')),
            hostileString(),
          ),
        },
        { requiredKeys: [] },
      );
      const requests = fc.record({
        form,
        basic: fc.boolean(),
        repeat: fc.option(fc.constantFrom('grant_type', 'client_id', 'resource')),
        contentType: fc.oneof(
          fc.constantFrom('application/x-www-form-urlencoded', 'application/json', 'text/plain'),
          hostileString().map((v) => v.replace(/[^\x20-\x7e]/g, '')),
        ),
        oversized: fc.boolean().map((b) => b && Math.random() < 0.1),
      });
      await fc.assert(
        fc.asyncProperty(requests, async ({ form: chosen, basic, repeat, contentType, oversized }) => {
          const fields: Record<string, string> = { ...(chosen as Record<string, string>) };
          if (fields.client_id === '__full__') fields.client_id = full.clientId;
          if (fields.client_secret === '__secret__') fields.client_secret = full.clientSecret;
          if (fields.client_secret?.startsWith('zq-')) secrets.add(fields.client_secret);
          const headers: Record<string, string> = { 'content-type': contentType };
          if (basic && fields.client_id !== undefined) {
            // Lone surrogates become U+FFFD first: encodeURIComponent refuses them.
            const wellFormed = (v: string) => Buffer.from(v, 'utf8').toString('utf8');
            const id = encodeURIComponent(wellFormed(fields.client_id));
            const secret = encodeURIComponent(wellFormed(fields.client_secret ?? ''));
            headers.authorization = `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`;
            delete fields.client_id;
            delete fields.client_secret;
          }
          const params = new URLSearchParams(fields);
          if (repeat && fields[repeat] !== undefined) params.append(repeat, fields[repeat] as string);
          const body = oversized ? `${params}&pad=${'x'.repeat(9000)}` : params.toString();
          const res = await sendRaw(port, { method: 'POST', path: '/mcp/token', headers, body }, agent);
          const problem = oauthProblemOf(res, 'POST');
          if (problem) throw new Error(`${problem} for ${cut(body)} ${JSON.stringify(headers)}`);
          if (res.status === 200) {
            const token = (JSON.parse(res.text) as { access_token?: string }).access_token;
            if (token) secrets.add(token);
          }
        }),
        { numRuns: fuzzRuns(100) },
      );
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'answers any method on the discovery documents, the JWKS, /mcp/authorize and unknown paths',
    async () => {
      const paths = fc.oneof(
        fc.constantFrom(
          '/.well-known/oauth-authorization-server/mcp',
          '/.well-known/oauth-protected-resource/mcp',
          '/.well-known/oauth-authorization-server',
          '/mcp/jwks.json',
          '/mcp/authorize?response_type=code&client_id=x',
          '/mcp/token',
          '/mcp',
          '/healthz',
          '/readyz',
        ),
        hostileString().map((s) => `/${encodeURIComponent(s.replace(/[\ud800-\udfff]/g, ''))}`),
        hostileString().map((s) => `/mcp/${encodeURIComponent(s.replace(/[\ud800-\udfff]/g, ''))}`),
      );
      await fc.assert(
        fc.asyncProperty(
          fc.constantFrom('GET', 'HEAD', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'),
          paths,
          async (method, path) => {
            const res = await sendRaw(port, { method, path, headers: { host: HOST } }, agent);
            // /mcp other than POST: the transport's 405, a JSON-RPC error naming the one method allowed.
            const notAllowed = /^\/mcp\/?$/.test(path) && res.status === 405;
            const allowed =
              res.headers.allow === 'POST' && (method === 'HEAD' || res.text.includes('-32000'));
            const problem = notAllowed
              ? allowed
                ? undefined
                : `405 ${cut(res.text)}`
              : oauthProblemOf(res, method);
            if (problem) throw new Error(`${problem} for ${method} ${cut(path)}`);
          },
        ),
        { numRuns: fuzzRuns(100) },
      );
    },
    TEST_TIMEOUT_MS,
  );
});

describe('edge fuzz: the logs', () => {
  it(
    'hold no token, client secret or memory content the run used',
    () => {
      // The edge logs little (refusals go to the audit table): whatever it logged is checked.
      expect(secrets.size).toBeGreaterThan(20);
      expect(logs.leaked(secrets)).toEqual([]);
      // The check itself finds a secret that was logged.
      const control = captureLogs();
      const planted = `zq-${randomUUID()}`;
      createLogger('control', 'info', control.destination).info({ note: `sent ${planted}` }, 'planted');
      expect(control.leaked([...secrets, planted])).toEqual([planted]);
    },
    TEST_TIMEOUT_MS,
  );
});
