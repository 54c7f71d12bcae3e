import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  createRegistryClient,
  fetchTransport,
  type RegistryClientOptions,
  RegistryError,
  retryAfterMs,
  TransportError,
} from '../src/index.js';

// The client against a local server speaking the registry's REST API (registry-api.md): answers
// parsed by the contract, errors mapped from status and body, retries, size bounds and credentials.

// A detail as registry-api.md's "Package detail" table has it (its defaulted fields left out).
const detail = {
  id: '0b6f3c1e-5a2d-4c8e-9f10-2b3c4d5e6f70',
  scope: 'acme',
  name: 'pdf',
  description: 'Read PDF files.',
  kind: 'skill',
  category: null,
  tags: [],
  compatibility: [],
  language: null,
  version: '1.0.0',
  sourceRepo: 'acme/skills',
  sourcePath: 'pdf',
  sourceRef: 'main',
  repoUrl: null,
  homepageUrl: null,
  repoOwner: 'acme',
  author: null,
  repoStars: 0,
  license: null,
  skillMdRaw: '---\nname: pdf\n---\n',
  frontmatter: {},
  allowedTools: [],
  tokenCount: 10,
  fileCount: 1,
  progressiveDisclosure: false,
  downloadCount: 0,
  depCount: 0,
  dependantCount: 0,
  verified: false,
  featured: false,
  status: 'active',
  hosted: false,
  firstIndexedAt: '2026-10-01T12:00:00.000Z',
  lastIndexedAt: '2026-11-20T08:15:30.000Z',
  lastCommitSha: null,
  warnings: [],
  risk: 'none',
  findings: [],
  quarantineReason: null,
  deprecationMessage: null,
};

type Handler = (req: IncomingMessage, res: ServerResponse, body: string) => void;
const routes = new Map<string, Handler>();
const seen: { method: string; url: string; headers: IncomingMessage['headers'] }[] = [];
const server = createServer((req, res) => {
  let body = '';
  req.on('data', (chunk) => {
    body += chunk;
  });
  req.on('end', () => {
    seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers });
    const handler = routes.get(`${req.method} ${req.url}`);
    if (handler) handler(req, res, body);
    else json(res, 404, { error: 'Not found' });
  });
});
let base = '';
let dead = '';

function json(res: ServerResponse, status: number, value: unknown, headers: Record<string, string> = {}) {
  const text = JSON.stringify(value);
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
}

beforeAll(async () => {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const closed = createServer().listen(0, '127.0.0.1');
  await once(closed, 'listening');
  dead = `http://127.0.0.1:${(closed.address() as AddressInfo).port}`;
  closed.close();
});

afterAll(() => {
  server.closeAllConnections();
  server.close();
});

beforeEach(() => {
  routes.clear();
  seen.length = 0;
});

const waits: number[] = [];
const lines: string[] = [];
function client(options: Partial<RegistryClientOptions> = {}) {
  waits.length = 0;
  lines.length = 0;
  return createRegistryClient({
    baseUrl: `${base}/`,
    transport: fetchTransport(),
    sleep: async (ms) => {
      waits.push(ms);
    },
    log: (line) => lines.push(line),
    ...options,
  });
}
const policy = { attempts: 3, baseDelayMs: 10, maxDelayMs: 20, maxRetryAfterMs: 5_000 };

async function failure(promise: Promise<unknown>): Promise<RegistryError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(RegistryError);
  return error as RegistryError;
}

describe('answers are parsed by their contract schema', () => {
  it('a detail comes back typed, with the schema defaults filled in', async () => {
    routes.set('GET /api/packages/@acme/pdf', (_req, res) => json(res, 200, detail));
    const pkg = await client().detail('acme', 'pdf');
    expect(pkg.name).toBe('pdf');
    expect(pkg.dependencies).toEqual([]);
    expect(seen[0]?.headers.accept).toBe('application/json');
  });

  it('an answer off the contract is malformed, naming the field; one that is not JSON too', async () => {
    routes.set('GET /api/packages/@acme/pdf', (_req, res) =>
      json(res, 200, { ...detail, tokenCount: 'many' }),
    );
    const off = await failure(client().detail('acme', 'pdf'));
    expect(off.code).toBe('malformed');
    expect(off.message).toMatch(/^Malformed response from registry \(@acme\/pdf\): tokenCount: /);
    routes.set('GET /api/search?q=pdf', (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<html>captive portal</html>');
    });
    const html = await failure(client().search('pdf'));
    expect(html).toMatchObject({ code: 'malformed', text: '<html>captive portal</html>' });
    expect(html.message).toBe('Malformed response from registry (search): not JSON');
  });

  it('names and versions are encoded into the path; filters keep the API names and order', async () => {
    routes.set('GET /api/search?q=a+b&kind=skill&verified=true&owner=acme', (_req, res) =>
      json(res, 200, { results: [], total: 0 }),
    );
    expect(await client().search('a b', { owner: 'acme', verified: true, kind: 'skill' })).toEqual({
      results: [],
      total: 0,
    });
    await failure(client().version('acme', 'pdf', '1.0.0+a/b'));
    expect(seen.at(-1)?.url).toBe('/api/packages/@acme/pdf/versions/1.0.0%2Ba%2Fb');
    await failure(client().file('acme', 'pdf', '1.0.0', 'scripts/a b.sh'));
    expect(seen.at(-1)?.url).toBe('/api/packages/@acme/pdf/versions/1.0.0/files/scripts/a%20b.sh');
  });
});

describe('errors are mapped from status and body', () => {
  it("a 404 or 410 carries the registry's message; a body that is not ours leaves only the status", async () => {
    routes.set('GET /api/packages/@acme/gone', (_req, res) => json(res, 410, { error: 'Removed: malware' }));
    const gone = await failure(client().detail('acme', 'gone'));
    expect(gone).toMatchObject({ code: 'status', status: 410, error: 'Removed: malware' });
    expect(gone.message).toBe('@acme/gone: Removed: malware');
    routes.set('GET /api/packages/@acme/proxy', (_req, res) => {
      res.writeHead(502, 'Bad Gateway');
      res.end('<html>bad gateway</html>');
    });
    const proxied = await failure(client().detail('acme', 'proxy'));
    expect(proxied).toMatchObject({
      code: 'status',
      status: 502,
      statusText: 'Bad Gateway',
      error: undefined,
    });
    expect(proxied.message).toBe('@acme/proxy: HTTP 502');
  });

  it('no connection is unavailable, with the reason', async () => {
    const down = await failure(client({ baseUrl: dead }).detail('acme', 'pdf'));
    expect(down.code).toBe('unavailable');
    expect(down.message).toMatch(new RegExp(`^Registry unavailable at ${dead}: `));
  });

  it("the caller's own abort goes through as it is, not as an outage", async () => {
    routes.set('GET /api/packages/@acme/slow', () => {});
    const controller = new AbortController();
    const pending = client().detail('acme', 'slow', { signal: controller.signal });
    setTimeout(() => controller.abort(), 20);
    const error = await pending.catch((e: unknown) => e);
    expect((error as Error).name).toBe('AbortError');
  });

  it('a transport timeout says how long it waited', async () => {
    routes.set('GET /api/packages/@acme/slow', () => {});
    const slow = await failure(
      client({ transport: fetchTransport({ timeoutMs: 100 }) }).detail('acme', 'slow'),
    );
    expect(slow).toMatchObject({ code: 'unavailable', failure: 'timed out after 100 ms' });
  });
});

describe('retries (with a policy)', () => {
  it('429 waits for Retry-After (capped), then succeeds; every step is logged', async () => {
    let calls = 0;
    routes.set('GET /api/packages/@acme/pdf', (_req, res) =>
      calls++ === 0
        ? json(res, 429, { error: 'slow down' }, { 'retry-after': '3600' })
        : json(res, 200, detail),
    );
    expect((await client({ retry: policy }).detail('acme', 'pdf')).name).toBe('pdf');
    expect(waits).toEqual([5_000]);
    expect(lines[0]).toMatch(new RegExp(`^GET ${base}/api/packages/@acme/pdf -> 429 \\(\\d+ ms\\)$`));
    expect(lines[1]).toBe('retrying in 5000 ms (attempt 2 of 3)');
  });

  it('a 5xx of an idempotent request is retried with backoff until the attempts run out', async () => {
    routes.set('GET /api/search?q=pdf', (_req, res) => json(res, 500, { error: 'database is down' }));
    const error = await failure(client({ retry: policy }).search('pdf'));
    expect(error).toMatchObject({ code: 'unavailable', failure: 'HTTP 500: database is down', attempts: 3 });
    expect(seen).toHaveLength(3);
    expect(waits).toHaveLength(2);
    for (const wait of waits) expect(wait).toBeLessThanOrEqual(20);
  });

  it('track is never resent once it may have arrived: not after a 5xx, not after a lost connection', async () => {
    routes.set('POST /api/packages/@acme/pdf/track', (_req, res) => json(res, 503, { error: 'busy' }));
    const busy = await failure(client({ retry: policy }).track('acme', 'pdf'));
    expect(busy).toMatchObject({ code: 'status', status: 503, error: 'busy' });
    expect(seen).toHaveLength(1);
    routes.set('POST /api/packages/@acme/pdf/track', (req) => req.socket.destroy());
    const reset = await failure(client({ retry: policy }).track('acme', 'pdf'));
    expect(reset.code).toBe('unavailable');
    expect(seen).toHaveLength(2);
    expect(waits).toEqual([]);
  });

  it('a request that provably never left is sent again, even a track', async () => {
    let attempts = 0;
    const refused = createRegistryClient({
      baseUrl: base,
      retry: policy,
      sleep: async () => {},
      transport: async (request) => {
        attempts++;
        if (attempts < 3) throw new TransportError('ECONNREFUSED', { notSent: true });
        return fetchTransport()(request);
      },
    });
    routes.set('POST /api/packages/@acme/pdf/track', (_req, res) => json(res, 200, { ok: true }));
    expect(await refused.track('acme', 'pdf')).toEqual({ ok: true });
    expect(attempts).toBe(3);
    expect(seen).toHaveLength(1);
  });

  it('without a policy, a 429 is an answer like any other', async () => {
    routes.set('GET /api/search?q=pdf', (_req, res) => json(res, 429, { error: 'Too many requests' }));
    const error = await failure(client().search('pdf'));
    expect(error).toMatchObject({ code: 'status', status: 429, error: 'Too many requests' });
    expect(seen).toHaveLength(1);
  });

  it('reads Retry-After as seconds or an HTTP date (RFC 9110)', () => {
    expect(retryAfterMs('2')).toBe(2000);
    expect(retryAfterMs(new Date(10_000 + 5_000).toUTCString(), 10_000)).toBe(5_000);
    expect(retryAfterMs('soon')).toBeUndefined();
    expect(retryAfterMs(undefined)).toBeUndefined();
  });
});

describe('size bounds', () => {
  it('a JSON answer over its bound is refused: by its declared length, or once the stream passes it', async () => {
    routes.set('GET /api/search?q=big', (_req, res) =>
      json(res, 200, { results: [], total: 0, pad: 'x'.repeat(200) }),
    );
    const declared = await failure(client({ maxJsonBytes: 100 }).search('big'));
    expect(declared).toMatchObject({ code: 'too_large', maxBytes: 100, download: false });
    expect(declared.message).toMatch(
      /^Malformed response from registry \(GET \/api\/search\?q=big\): \d+ bytes, more than the 100 a response may have$/,
    );
    routes.set('GET /api/search?q=endless', (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"results": [');
      const timer = setInterval(() => res.write(' '.repeat(64)), 1);
      res.on('close', () => clearInterval(timer));
    });
    const streamed = await failure(client({ maxJsonBytes: 1_000 }).search('endless'));
    expect(streamed).toMatchObject({ code: 'too_large', received: 'more than 1000' });
    expect(seen).toHaveLength(2);
  });

  it("an archive over its download's bound is refused as a download; progress is reported", async () => {
    const bytes = Buffer.alloc(5_000, 1);
    routes.set('GET /api/packages/@acme/pdf/versions/1.0.0/archive.tgz', (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/gzip', 'content-length': bytes.length });
      res.end(bytes);
    });
    const progress: [number, number | undefined][] = [];
    const got = await client().archive('acme', 'pdf', '1.0.0', {
      maxBytes: 5_000,
      onProgress: (received, total) => progress.push([received, total]),
    });
    expect(Buffer.from(got).equals(bytes)).toBe(true);
    expect(progress.at(-1)).toEqual([5_000, 5_000]);
    expect(seen[0]?.headers.accept).toBe('application/gzip');
    const over = await failure(client().archive('acme', 'pdf', '1.0.0', { maxBytes: 4_999 }));
    expect(over).toMatchObject({ code: 'too_large', download: true });
    expect(over.message).toBe('The registry sent 5000 bytes where at most 4999 were expected');
  });

  it("a file's head is cut at its limit and says so", async () => {
    routes.set('GET /api/packages/@acme/pdf/versions/1.0.0/files/README.md', (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/markdown' });
      res.end('0123456789');
    });
    expect(await client().fileHead('acme', 'pdf', '1.0.0', 'README.md', 4)).toEqual({
      bytes: new TextEncoder().encode('0123'),
      truncated: true,
      contentType: 'text/markdown',
    });
    const whole = await client().fileHead('acme', 'pdf', '1.0.0', 'README.md', 10);
    expect(whole.truncated).toBe(false);
  });
});

describe('conditional reads and credentials', () => {
  it('a detail unchanged since its ETag is a 304', async () => {
    routes.set('GET /api/packages/@acme/pdf', (req, res) => {
      if (req.headers['if-none-match'] === '"v1"') {
        res.writeHead(304, { etag: '"v1"' });
        res.end();
      } else json(res, 200, detail, { etag: '"v1"' });
    });
    const first = await client().revalidateDetail('acme', 'pdf', undefined);
    expect(first).toMatchObject({ status: 200, etag: '"v1"', body: { name: 'pdf' } });
    expect(await client().revalidateDetail('acme', 'pdf', '"v1"')).toEqual({ status: 304 });
  });

  it("credentials go in Authorization, a call's proof instead of them, and never into a log line", async () => {
    routes.set('POST /api/packages/@acme/pdf/track', (_req, res) => json(res, 200, { ok: true }));
    routes.set('DELETE /api/packages/@acme/pdf/deprecation', (_req, res) =>
      json(res, 200, { scope: 'acme', name: 'pdf', status: 'active', deprecationMessage: null }),
    );
    const withToken = client({ credentials: () => 'account-token' });
    await withToken.track('acme', 'pdf');
    await withToken.setDeprecation('proof-token', 'acme', 'pdf', null).catch(() => {});
    expect(seen.map((r) => r.headers.authorization)).toEqual(['Bearer account-token', 'Bearer proof-token']);
    expect(lines.join('\n')).not.toMatch(/token/);
    await client().track('acme', 'pdf');
    expect(seen.at(-1)?.headers.authorization).toBeUndefined();
  });

  it("a read's own token goes instead of the credentials, for that call only", async () => {
    routes.set('GET /api/packages/@acme/pdf', (_req, res) => json(res, 200, detail));
    routes.set('GET /api/packages/@acme/pdf/versions/1.0.0/files/SKILL.md', (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/markdown' });
      res.end('# pdf');
    });
    routes.set('GET /api/search?q=pdf', (_req, res) => json(res, 200, { results: [], total: 0 }));
    const withToken = client({ credentials: () => 'account-token' });
    await withToken.detail('acme', 'pdf', { token: 'call-token' });
    await withToken.revalidateDetail('acme', 'pdf', undefined, { token: 'call-token' });
    await withToken.file('acme', 'pdf', '1.0.0', 'SKILL.md', { token: 'call-token' });
    await withToken.search('pdf', {}, { token: 'call-token' });
    await withToken.detail('acme', 'pdf');
    await client().file('acme', 'pdf', '1.0.0', 'SKILL.md');
    expect(seen.map((r) => r.headers.authorization)).toEqual([
      ...Array(4).fill('Bearer call-token'),
      'Bearer account-token',
      undefined,
    ]);
    expect(lines.join('\n')).not.toMatch(/token/);
  });

  it('account calls carry the credentials; a session bearer replaces them; the login exchange sends none', async () => {
    const summary = {
      id: '7e6f262d-fd7f-4c09-9e6d-56f70df27adf',
      name: 'ci',
      prefix: 'pkgreg_abcd',
      permission: 'read',
      organizations: [],
      scopes: [],
      packages: [],
      allowedCidrs: [],
      createdAt: '2026-11-29T00:00:00.000Z',
      expiresAt: '2026-12-29T00:00:00.000Z',
      lastUsedAt: null,
      revokedAt: null,
    };
    routes.set('GET /api/tokens', (_req, res) => json(res, 200, { data: [summary] }));
    routes.set('POST /api/tokens', (_req, res) => json(res, 201, { ...summary, token: 'pkgreg_new' }));
    routes.set('DELETE /api/tokens/current', (_req, res) => json(res, 200, summary));
    routes.set('POST /api/cli/token', (_req, res) =>
      json(res, 201, {
        token: 'pkgreg_new',
        id: summary.id,
        expiresAt: summary.expiresAt,
        account: { email: 'a@b.c' },
      }),
    );
    const withToken = client({ credentials: () => 'account-token' });
    expect(await withToken.listTokens()).toEqual([summary]);
    const request = {
      name: 'ci',
      permission: 'read' as const,
      organizations: [],
      scopes: [],
      packages: [],
      allowedCidrs: [],
      expiresInDays: 30,
    };
    expect((await withToken.createToken(request, 'session-token')).token).toBe('pkgreg_new');
    await withToken.revokeCurrentToken();
    const login = await withToken.cliToken({
      code: 'c',
      code_verifier: 'v'.repeat(43),
      redirect_uri: 'http://127.0.0.1:1/callback',
      name: 'n',
    });
    expect(login.account.email).toBe('a@b.c');
    expect(seen.slice(-4).map((r) => `${r.method} ${r.url} ${r.headers.authorization}`)).toEqual([
      'GET /api/tokens Bearer account-token',
      'POST /api/tokens Bearer session-token',
      'DELETE /api/tokens/current Bearer account-token',
      'POST /api/cli/token undefined',
    ]);
    expect(lines.join('\n')).not.toMatch(/token-|pkgreg_new/);
  });
});
