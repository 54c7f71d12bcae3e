import { randomUUID } from 'node:crypto';
import type { Agent, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ErrorBodySchema, QUEUES } from '@pkgreg/contracts';
import { insertOrganisation, TEST_REDIS_URL, testKeyPrefix } from '@pkgreg/db/testing';
import { indexSource } from '@pkgreg/indexer';
import { createRepo, removeDir, skillMd, tempDir } from '@pkgreg/indexer/testing';
import { checkpoint, logPendingVersions } from '@pkgreg/registry';
import { closeServer, createLogger, listen } from '@pkgreg/server-kit';
import { createRuntimeQueue, type RuntimeQueue } from '@pkgreg/tasks';
import {
  actionsClaims,
  captureLogs,
  FakeGitHub,
  fuzzAgent,
  fuzzRuns,
  type JsonSchema,
  type OidcIssuer,
  type RawResponse,
  sendRaw,
  startOidcIssuer,
  validish,
  hostileString as vHostile,
} from '@pkgreg/testing';
import fc from 'fast-check';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildOpenApiDocument } from '../src/openapi/openapi.js';
import { insertPackages, packageRow, useTestRegistry } from './fixtures.js';
import { newSigner } from './log-helpers.js';

// The fault suite's hostile input (issue 22, "Trust it"): every operation of the OpenAPI document, so a
// new route is fuzzed as soon as it is documented, with fuzzed path segments, query parameters, headers
// and bodies. Properties: never a 5xx; every refusal is `{error}` with a status the document (or
// decisions.md: 400 malformed, 404 unknown route, 413 body too large) gives; a refused write leaves
// every table as it was; nothing the clients sent as a secret reaches the log.
// PKGREG_FAULTS=full (pnpm test:faults) runs many more cases.

const PUBLIC_URL = 'https://registry.example';
const prefix = testKeyPrefix('registry-fuzz');
const logs = captureLogs();
/** Secrets the run sent or was given; none may be logged. */
const secrets = new Set<string>();
const WEBHOOK_SECRET_KEY = `whk-${randomUUID()}-${randomUUID()}`;
secrets.add(WEBHOOK_SECRET_KEY);

let gh: FakeGitHub;
let issuer: OidcIssuer;
let queue: RuntimeQueue;
let root: string;

beforeAll(async () => {
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
  gh.addUser('ghu_fuzz_pusher', 'pusher', { 'octo/skills': 'push' });
  gh.addUser('ghu_fuzz_reader', 'reader', { 'octo/skills': 'pull' });
  issuer = await startOidcIssuer();
  queue = createRuntimeQueue({ connection: TEST_REDIS_URL, prefix });
});

const t = useTestRegistry(
  () => ({
    OIDC_ISSUER: issuer.issuer,
    REGISTRY_PUBLIC_URL: PUBLIC_URL,
    GITHUB_API_URL: gh.apiUrl,
    GITHUB_WEB_URL: 'https://github.example',
    DETAIL_CACHE_TTL_MS: '0',
    WEBHOOK_SECRET_KEY,
    QUEUE_PREFIX: prefix,
    EDGE_PUBLIC_BASE_URL: 'https://mcp.example',
  }),
  { logger: createLogger('registry-fuzz', 'debug', logs.destination), queue: () => queue },
);

let server: Server;
let port: number;
let agent: Agent;
/** Tokens the fuzzer sends as proofs: valid ones, ones that prove too little, and garbage. */
let tokens: string[] = [];

beforeAll(async () => {
  root = tempDir('registry-fuzz');
  const repo = createRepo(root, 'acme', 'skills', {
    'skills/pdf/SKILL.md': skillMd(['name: pdf', 'description: Fill PDF forms.', 'license: MIT']),
    'skills/pdf/forms.md': '# Forms\n',
    'skills/pdf/scripts/fill.py': { content: 'print("filled")\n', executable: true },
    'skills/pdf/assets/page.html': '<script>alert(1)</script>\n',
  });
  await indexSource({ db: t.db }, { kind: 'git', locator: repo, owner: 'acme' });
  await insertPackages(t.db, [
    packageRow({ scope: 'acme', name: 'writer' }),
    packageRow({ scope: 'octo' }),
    packageRow({ scope: 'fuzzorg', name: 'notes' }),
  ]);
  // An organisation with a public package, so the routes named by a slug can answer more than 404.
  await insertOrganisation(t.db, { id: 'org-fuzz', slug: 'fuzz-org', scopes: { fuzzorg: 'public' } });
  // The transparency log's checkpoint answers 200 only once something is logged and signed.
  await logPendingVersions(t.db);
  await checkpoint(t.db, newSigner(), 'registry.example/log');
  const oidc = await issuer.issue(
    actionsClaims({
      repository: 'octo/skills',
      ownerId: gh.accountId('octo'),
      repositoryId: gh.repoId('octo', 'skills'),
    }),
    { audience: PUBLIC_URL },
  );
  const wrongAudience = await issuer.issue(
    actionsClaims({ repository: 'octo/skills', ownerId: gh.accountId('octo'), repositoryId: 1 }),
    { audience: 'https://elsewhere.example' },
  );
  tokens = [oidc, wrongAudience, 'ghu_fuzz_pusher', 'ghu_fuzz_reader', 'ghu_fuzz_unknown'];
  for (const token of tokens) secrets.add(token);
  server = await listen(t.app, 0, '127.0.0.1');
  port = (server.address() as AddressInfo).port;
  agent = fuzzAgent();
});

afterAll(async () => {
  agent?.destroy();
  if (server) await closeServer(server);
  await queue?.queue(QUEUES.indexing).obliterate({ force: true });
  await queue?.close();
  await gh?.stop();
  await issuer?.close();
  if (root) removeDir(root);
});

// --- the operations, from the OpenAPI document -------------------------------------------------------

interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header';
  required?: boolean;
  schema?: JsonSchema;
}
interface Operation {
  template: string;
  method: string;
  parameters: Parameter[];
  body: JsonSchema | undefined;
  /** Statuses the document gives this operation. */
  statuses: Set<number>;
  /** Statuses the document answers with an HTML page (a browser's page: the CLI sign-in's approval). */
  htmlStatuses: Set<number>;
}

const document = buildOpenApiDocument() as {
  paths: Record<
    string,
    Record<string, { parameters?: Parameter[]; requestBody?: unknown; responses: object }>
  >;
};
const operations: Operation[] = Object.entries(document.paths).flatMap(([template, methods]) =>
  Object.entries(methods).map(([method, op]) => ({
    template,
    method: method.toUpperCase(),
    parameters: op.parameters ?? [],
    body: (op.requestBody as { content?: Record<string, { schema: JsonSchema }> } | undefined)?.content?.[
      'application/json'
    ]?.schema,
    statuses: new Set(Object.keys(op.responses).map(Number)),
    htmlStatuses: new Set(
      Object.entries(op.responses as Record<string, { content?: Record<string, unknown> }>)
        .filter(([, response]) => response.content?.['text/html'] !== undefined)
        .map(([status]) => Number(status)),
    ),
  })),
);
/** A failing property shrinks its counterexample, one request at a time: that takes a while. */
const TEST_TIMEOUT_MS = fuzzRuns(120_000, 1_800_000);
const label = (op: Operation) => `${op.method} ${op.template}`;
/** Operations whose documented refusals are HTML pages, each with its template as a pattern. */
const HTML_PAGES = operations
  .filter((op) => op.htmlStatuses.size > 0)
  .map((op) => ({
    method: op.method,
    pattern: new RegExp(`^${op.template.replace(/\{[^}]+\}/g, '[^/]+')}$`),
    statuses: op.htmlStatuses,
  }));

/** The HTML statuses of the operation a concrete `METHOD path` reaches, if it reaches one that has any. */
function htmlStatusesOf(method: string, path: string): Set<number> | undefined {
  const bare = path.split('?')[0] ?? '';
  return HTML_PAGES.find((page) => page.method === method && page.pattern.test(bare))?.statuses;
}
/**
 * decisions.md ("Registry paths"): a malformed request is 400, an unknown route 404, a body over 16 KiB
 * 413; a request line and headers over Node's 16 KiB 431 (server-kit listen.ts).
 */
const GENERAL_REFUSALS = new Set([400, 404, 413, 431]);

// --- values ------------------------------------------------------------------------------------------

const SAFE = /^[A-Za-z0-9\-._~@]$/;

/** Percent-encodes `value`'s UTF-8 bytes, except unreserved characters (and `keep`). */
function percentEncode(value: string, keep: RegExp = SAFE): string {
  let out = '';
  for (const char of value) {
    if (keep.test(char)) out += char;
    else
      for (const byte of Buffer.from(char, 'utf8'))
        out += `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

/**
 * A segment as a client might put it in a URL: properly encoded, or loosely (printable ASCII left as it
 * is, so `%zz`, `..` and `/` reach the router raw).
 */
const encoded = (value: string, loose: boolean) =>
  loose
    ? percentEncode(value, /^[\x21-\x7e]$/).replace(/[?#]/g, (c) => percentEncode(c))
    : percentEncode(value);

const FILE_PATHS = ['SKILL.md', 'forms.md', 'scripts/fill.py', 'assets/page.html', 'assets/../SKILL.md'];

const pathValues: Record<string, fc.Arbitrary<string>> = {
  scope: fc.oneof(
    fc.constantFrom('@acme', '@octo', '%40acme', 'acme', '@ACME'),
    fc.stringMatching(/^@[a-z0-9-]{1,64}$/),
    vHostile(),
  ),
  name: fc.oneof(fc.constantFrom('pdf', 'writer', 'PDF'), fc.stringMatching(/^[a-z0-9-]{1,64}$/), vHostile()),
  version: fc.oneof(
    fc.constantFrom('latest', 'LATEST', '0.0.0', '1.0.0', '^1.0.0', '*'),
    fc.tuple(fc.nat(99), fc.nat(99), fc.nat(99)).map((v) => v.join('.')),
    vHostile(),
  ),
  path: fc.oneof(
    fc.constantFrom(...FILE_PATHS),
    fc
      .array(fc.oneof(fc.constantFrom('..', '.', '', 'SKILL.md', 'assets', '%2e%2e', '..%2f'), vHostile()), {
        minLength: 1,
        maxLength: 6,
      })
      .map((parts) => parts.join('/')),
  ),
  runId: fc.oneof(fc.uuid(), vHostile()),
  // The fixture's organisation most of the time, so that each route named by a slug answers beyond its
  // 404 in every run (a random slug names no organisation: only an odd hostile one gets a 400).
  slug: fc.oneof(
    { weight: 3, arbitrary: fc.constant('fuzz-org') },
    { weight: 1, arbitrary: fc.stringMatching(/^[a-z0-9-]{1,64}$/) },
    { weight: 1, arbitrary: vHostile() },
  ),
  // Tokens, sessions and trusted publishers are named by id: well-formed half the time, or a route that
  // checks the id's shape first would answer nothing but its 404 and never be reached.
  id: fc.oneof(fc.uuid(), vHostile()),
};

function pathArbitrary(op: Operation): fc.Arbitrary<string> {
  const names = [...op.template.matchAll(/\{([^}]+)\}/g)].map((m) => m[1] as string);
  const values = names.map((name) =>
    fc.tuple(pathValues[name] ?? fc.oneof(vHostile(), fc.string()), fc.boolean(), fc.nat(9)),
  );
  return fc.tuple(...values).map((chosen) => {
    let path = op.template;
    chosen.forEach(([value, loose], i) => {
      // The file path keeps its `/` separators (the document says so); every other value is one segment.
      const segment =
        names[i] === 'path'
          ? value
              .split('/')
              .map((part) => encoded(part, loose))
              .join('/')
          : encoded(value, loose);
      path = path.replace(`{${names[i]}}`, segment);
    });
    return path;
  });
}

function queryArbitrary(op: Operation): fc.Arbitrary<string> {
  const query = op.parameters.filter((p) => p.in === 'query');
  const pairs = query.map((p) =>
    fc.option(
      fc.tuple(
        fc.constant(p.name),
        fc.array(fc.oneof({ weight: 3, arbitrary: validish(p.schema ?? {}) }, vHostile()), {
          minLength: 1,
          maxLength: 2,
        }),
        fc.boolean(),
      ),
      { freq: 2 },
    ),
  );
  const unknown = fc.option(
    fc.tuple(vHostile(), fc.array(vHostile(), { minLength: 1, maxLength: 1 }), fc.boolean()),
  );
  return fc.tuple(fc.tuple(...pairs), unknown).map(([chosen, extra]) => {
    const parts: string[] = [];
    for (const entry of [...chosen, extra]) {
      if (!entry) continue;
      const [name, values, loose] = entry;
      for (const value of values) {
        const text = typeof value === 'string' ? value : (JSON.stringify(value) ?? '');
        parts.push(`${encoded(name, loose)}=${encoded(text, loose)}`);
      }
    }
    return parts.length ? `?${parts.join('&')}` : '';
  });
}

/** A header value Node will send (no control characters; Latin-1 at most). */
const headerValue = (s: string) => s.replace(/[^\x20-\x7e\x80-\xff]/g, '').slice(0, 4000);
const garbageToken = () => fc.uuid().map((u) => `zq-${u}`);

function headersArbitrary(op: Operation): fc.Arbitrary<Record<string, string>> {
  const authorization = fc.oneof(
    fc.constantFrom(...tokens).map((token) => `Bearer ${token}`),
    garbageToken().map((token) => `Bearer ${token}`),
    garbageToken().map((token) => `Bearer ${token}.${token}.${token}`),
    garbageToken().map((token) => `Basic ${Buffer.from(`${token}:${token}`).toString('base64')}`),
    vHostile().map((s) => `Bearer ${headerValue(s)}`),
    vHostile().map(headerValue),
  );
  const contentType = fc.oneof(
    fc.constantFrom(
      'application/json',
      'application/json; charset=utf-8',
      'application/json; charset=utf-16',
      'application/json; charset=bogus',
      'text/plain',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=x',
    ),
    vHostile().map(headerValue),
  );
  const ifNoneMatch = fc.oneof(
    fc.constantFrom('*', 'W/"x"', '"x", W/"y"', ',,,', '"'),
    vHostile().map(headerValue),
  );
  const github = op.template === '/api/hooks/github';
  return fc
    .record(
      {
        authorization,
        'content-type': contentType,
        'if-none-match': ifNoneMatch,
        'x-request-id': vHostile().map(headerValue),
        'content-encoding': fc.constantFrom('gzip', 'deflate', 'br', 'identity', 'bogus'),
        ...(github
          ? {
              'x-github-event': fc.oneof(fc.constantFrom('ping', 'push'), vHostile().map(headerValue)),
              'x-hub-signature-256': fc.oneof(
                fc.stringMatching(/^sha256=[0-9a-f]{64}$/),
                vHostile().map(headerValue),
              ),
            }
          : {}),
      },
      { requiredKeys: [] },
    )
    .map((headers) => Object.fromEntries(Object.entries(headers).filter(([, v]) => v !== undefined)));
}

function bodyArbitrary(op: Operation): fc.Arbitrary<string | undefined> {
  const garbage = fc.oneof(
    fc.constantFrom('{', 'null', '[]', '""', '{"a":', '\u0000', '{"__proto__":{"x":1}}'),
    vHostile(),
  );
  const tooBig = fc
    .integer({ min: 16 * 1024, max: 64 * 1024 })
    .map((n) => JSON.stringify({ pad: 'x'.repeat(n) }));
  if (!op.body) return fc.option(fc.oneof(garbage, tooBig), { freq: 4 }).map((b) => b ?? undefined);
  return fc.oneof(
    { weight: 6, arbitrary: validish(op.body, { root: document }).map((v) => JSON.stringify(v) ?? 'null') },
    { weight: 2, arbitrary: garbage },
    { weight: 1, arbitrary: tooBig },
    { weight: 1, arbitrary: fc.constant(undefined) },
  );
}

interface FuzzRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: string | undefined;
}

function requestArbitrary(op: Operation): fc.Arbitrary<FuzzRequest> {
  return fc
    .tuple(pathArbitrary(op), queryArbitrary(op), headersArbitrary(op), bodyArbitrary(op))
    .map(([path, query, headers, body]) => ({ method: op.method, path: `${path}${query}`, headers, body }));
}

// --- checks ------------------------------------------------------------------------------------------

/** Every table's row count and the packages' row versions: what a refused write must leave as it was. */
async function snapshot(): Promise<string> {
  const tables = await sql<{ name: string }>`
    select tablename as name from pg_tables where schemaname = 'public' order by tablename`.execute(t.db);
  const counts = tables.rows.map((r) => `(select count(*) from "${r.name}") as "${r.name}"`).join(', ');
  const { rows } = await sql
    .raw<Record<string, unknown>>(
      `select ${counts}, (select coalesce(sum(row_version), 0) from packages) as package_row_versions`,
    )
    .execute(t.db);
  return JSON.stringify(rows[0]);
}

async function send(req: FuzzRequest): Promise<RawResponse> {
  for (const value of Object.values(req.headers)) {
    const token = /(?:Bearer |^)(zq-[0-9a-f-]{36})/.exec(value)?.[1];
    if (token) secrets.add(token);
  }
  const res = await sendRaw(port, { ...req, headers: req.headers, body: req.body }, agent);
  if (res.status === 202 && res.headers['content-type']?.includes('json')) {
    const secret = (JSON.parse(res.text) as { webhook?: { secret?: string } }).webhook?.secret;
    if (secret) secrets.add(secret);
  }
  return res;
}

/** The property every answer must have; returns a description of what is wrong, or undefined. */
function refusalProblem(
  res: RawResponse,
  allowed: Set<number>,
  method: string,
  html: Set<number> = new Set(),
): string | undefined {
  if (res.status >= 500) return `status ${res.status}`;
  if (res.status < 400) return undefined;
  if (!allowed.has(res.status) && !GENERAL_REFUSALS.has(res.status))
    return `undocumented status ${res.status}`;
  if (!res.headers['x-request-id']) return 'no X-Request-Id';
  if (res.status === 401 && !res.headers['www-authenticate']) return '401 without WWW-Authenticate';
  if (res.status === 429 && !res.headers['retry-after']) return '429 without Retry-After';
  if (method === 'HEAD') return undefined;
  // A page the document says is HTML (for a browser) must be HTML and never framed; only the general
  // refusals (a path no route matches, a malformed request) may still come as `{error}` there.
  if (String(res.headers['content-type']).startsWith('text/html')) {
    if (!html.has(res.status)) return `an HTML ${res.status} the document does not give`;
    return res.headers['x-frame-options'] === 'DENY' ? undefined : 'an HTML refusal that may be framed';
  }
  if (html.has(res.status) && !GENERAL_REFUSALS.has(res.status)) {
    return `content-type ${res.headers['content-type']}`;
  }
  if (!String(res.headers['content-type']).startsWith('application/json')) {
    return `content-type ${res.headers['content-type']}`;
  }
  try {
    const body = JSON.parse(res.text) as unknown;
    const parsed = ErrorBodySchema.safeParse(body);
    if (!parsed.success || Object.keys(body as object).length !== 1) return `body ${res.text.slice(0, 200)}`;
  } catch {
    return `body is not JSON: ${res.text.slice(0, 200)}`;
  }
  return undefined;
}

const cut = (s: string | undefined) => (s && s.length > 300 ? `${s.slice(0, 300)}…(${s.length})` : s);
const describeRequest = (req: FuzzRequest) =>
  JSON.stringify({ ...req, path: cut(req.path), body: cut(req.body) });

/** Per operation: requests sent, and answers in its own documented set (not the generic 404). */
const coverage = new Map<string, { sent: number; reached: number }>();

describe('registry fuzz: every operation of the OpenAPI document', () => {
  for (const op of operations) {
    it(
      `${label(op)}: no 5xx, refusals of the documented shape, refused writes leave no rows`,
      async () => {
        const seen = { sent: 0, reached: 0 };
        coverage.set(label(op), seen);
        const writes = op.method !== 'GET';
        await fc.assert(
          fc.asyncProperty(requestArbitrary(op), async (req) => {
            const before = writes ? await snapshot() : '';
            const res = await send(req);
            seen.sent += 1;
            if (op.statuses.has(res.status) && res.status !== 404) seen.reached += 1;
            const problem = refusalProblem(res, op.statuses, op.method, op.htmlStatuses);
            if (problem)
              throw new Error(
                `${problem} (${res.status} ${JSON.stringify(res.headers)} ${cut(res.text)}) for ${describeRequest(req)}`,
              );
            if (writes && res.status >= 400) {
              const after = await snapshot();
              if (after !== before)
                throw new Error(`refused ${res.status} but state changed: ${describeRequest(req)}`);
            }
          }),
          { numRuns: fuzzRuns(25) },
        );
      },
      TEST_TIMEOUT_MS,
    );
  }

  it('covers every operation of the document, each reached by some request', () => {
    expect(operations.length).toBeGreaterThan(15);
    for (const op of operations) {
      const seen = coverage.get(label(op));
      expect(seen, label(op)).toBeDefined();
      expect(seen?.sent, label(op)).toBeGreaterThanOrEqual(fuzzRuns(25));
      expect(seen?.reached, `${label(op)} never answered with one of its own statuses`).toBeGreaterThan(0);
    }
  });
});

describe('registry fuzz: any method on any path', () => {
  const paths = fc.oneof(
    fc.constantFrom(...operations).chain(pathArbitrary),
    fc.constantFrom('/api/openapi.json', '/healthz', '/readyz', '/api', '/api/', '/api/packages/', '/'),
    vHostile().map((s) => `/api/${encoded(s, true)}`),
    vHostile().map((s) => `/${encoded(s, true)}`),
  );
  it(
    'answers every method on every path without a 5xx, refusals as `{error}`',
    async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.constantFrom('GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'),
          paths,
          fc.option(vHostile(), { freq: 3 }),
          async (method, path, body) => {
            const req = {
              method,
              path,
              headers: { 'content-type': 'application/json' },
              body: body ?? undefined,
            };
            const res = await send(req);
            const problem = refusalProblem(
              res,
              new Set([400, 401, 403, 404, 405, 410, 413, 429]),
              method,
              htmlStatusesOf(method, path),
            );
            if (problem)
              throw new Error(
                `${problem} (${res.status} ${JSON.stringify(res.headers)} ${cut(res.text)}) for ${describeRequest(req)}`,
              );
          },
        ),
        { numRuns: fuzzRuns(150) },
      );
    },
    TEST_TIMEOUT_MS,
  );
});

describe('registry fuzz: the logs', () => {
  it(
    'hold no token, proof, webhook secret or key the run used',
    () => {
      expect(logs.lines.length).toBeGreaterThan(100);
      expect(secrets.size).toBeGreaterThan(10);
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
